import { randomUUID } from 'node:crypto';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createMolfClient, type MolfClient } from '@molf/client/node';
import type { Approval } from '@molf/protocol';
import { describe, expect, it } from 'vitest';
import { startTestLink, TEST_CLIENT_TOKEN, waitFor } from '../testing/test-link.ts';

type Link = Awaited<ReturnType<typeof startTestLink>>;

const RM_NOTE =
  'rm deletes files for good, so "always" and "session" offer only this exact command, never a wider pattern.';

async function clientOf(link: Link): Promise<MolfClient> {
  const client = createMolfClient({ url: link.server.url, token: TEST_CLIENT_TOKEN });
  await client.ready();
  return client;
}

/** Runs a shell line in a session, waits until it asks, and returns the call and its approval. */
async function asked(link: Link, command: string, sessionId = randomUUID()) {
  const before = new Set(link.server.gate.pending().map((approval) => approval.approvalId));
  const call = link.server.toolCalls.run({
    workerId: link.worker.workerId,
    sessionId,
    tool: 'shell_exec',
    args: { command },
    timeoutMs: 10_000,
  });
  let approval: Approval | undefined;
  await waitFor(
    () => {
      approval = link.server.gate.pending().find((candidate) => !before.has(candidate.approvalId));
      return approval !== undefined;
    },
    { what: `an approval for ${command}` },
  );
  return { call, approval: approval as Approval, sessionId };
}

function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

describe('answers to a destructive command', () => {
  it('offers only the exact command with a note, refuses an edited wider pattern over RPC saying why, and asks again for another rm', async () => {
    await using link = await startTestLink();
    await using client = await clientOf(link);
    await mkdir(join(link.workdir, 'build', 'out'), { recursive: true });
    await mkdir(join(link.workdir, 'other'));

    const first = await asked(link, 'rm -rf build');
    const rulesBefore = await readFile(link.server.permissions.pathOf(link.worker.workerId), 'utf8');
    expect(first.approval).toMatchObject({ alwaysPatterns: ['rm -rf build'], alwaysNote: RM_NOTE });

    for (const scope of ['session', 'always'] as const) {
      await expect(
        client.rpc.approvals.approve.mutate({
          sessionId: first.sessionId,
          approvalId: first.approval.approvalId,
          scope,
          patterns: ['rm *'],
        }),
      ).rejects.toMatchObject({
        message:
          'the pattern "rm *" is not one this approval offers, and for this call only the offered exact pattern ("rm -rf build") may be saved: ' +
          RM_NOTE,
        data: { code: 'invalid_input', field: 'patterns.0' },
      });
    }
    // Refused: nothing saved, the call still waits and nothing was deleted.
    expect(await readFile(link.server.permissions.pathOf(link.worker.workerId), 'utf8')).toBe(rulesBefore);
    expect(link.server.gate.pending().map((approval) => approval.approvalId)).toEqual([first.approval.approvalId]);
    expect(await exists(join(link.workdir, 'build'))).toBe(true);

    await client.rpc.approvals.approve.mutate({
      sessionId: first.sessionId,
      approvalId: first.approval.approvalId,
      scope: 'session',
    });
    await first.call;
    expect(await exists(join(link.workdir, 'build'))).toBe(false);

    // The session answer covers that exact line only: another rm in the same session asks.
    const second = await asked(link, 'rm -rf other', first.sessionId);
    expect(second.approval).toMatchObject({ alwaysPatterns: ['rm -rf other'], alwaysNote: expect.any(String) });
    await client.rpc.approvals.deny.mutate({ sessionId: second.sessionId, approvalId: second.approval.approvalId });
    expect((await second.call).meta?.errorKind).toBe('permission_denied');
    expect(await exists(join(link.workdir, 'other'))).toBe(true);
  });

  it('offers no "always" when not even the exact line says what it deletes, and refuses one naming why', async () => {
    await using link = await startTestLink();
    await using client = await clientOf(link);
    const waiting = await asked(link, 'ls | xargs rm -f');
    const note =
      'rm deletes files for good, and what it acts on is only known when the line runs, so "always" and "session" are not offered: approve it once.';
    expect(waiting.approval).toMatchObject({ alwaysPatterns: null, alwaysNote: note });
    await expect(
      client.rpc.approvals.approve.mutate({
        sessionId: waiting.sessionId,
        approvalId: waiting.approval.approvalId,
        scope: 'always',
      }),
    ).rejects.toMatchObject({
      message: `"always" is not offered for this call: ${note}`,
      data: { code: 'invalid_input', field: 'scope' },
    });
    expect(link.server.gate.pending()).toHaveLength(1);
    await client.rpc.approvals.deny.mutate({ sessionId: waiting.sessionId, approvalId: waiting.approval.approvalId });
    await waiting.call;
  });

  it('keeps the wider pattern and offers no note for a harmless command, and lets a person edit it', async () => {
    await using link = await startTestLink();
    await using client = await clientOf(link);
    const waiting = await asked(link, 'echo harmless');
    expect(waiting.approval.alwaysPatterns).toEqual(['echo *']);
    expect(waiting.approval).not.toHaveProperty('alwaysNote');
    await client.rpc.approvals.approve.mutate({
      sessionId: waiting.sessionId,
      approvalId: waiting.approval.approvalId,
      scope: 'session',
      patterns: ['echo harm*'],
    });
    expect((await waiting.call).output).toContain('harmless');
  });

  it('explains a destructive call with its exact pattern and the note', async () => {
    await using link = await startTestLink();
    await using client = await clientOf(link);
    const explanation = await client.rpc.permissions.explain.query({
      workerId: link.worker.workerId,
      tool: 'shell_exec',
      args: { command: 'git push --force origin main' },
    });
    expect(explanation).toMatchObject({
      decision: 'ask',
      alwaysPatterns: ['git push --force origin main'],
      alwaysNote:
        'git push --force overwrites or deletes the remote\'s history, so "always" and "session" offer only this exact command, never a wider pattern.',
    });
  });
});

describe('a wider answer saved for a harmless command', () => {
  /** The permission bits of a file, as `chmod` writes them: `644`. */
  async function modeOf(path: string): Promise<string> {
    return ((await stat(path)).mode & 0o777).toString(8);
  }

  /**
   * A workdir with a.txt, whose rules let lines write files (chmod changes the files it names): the
   * approvals then ask only about the command itself.
   */
  async function startChmodLink() {
    const link = await startTestLink();
    const path = link.server.permissions.pathOf(link.worker.workerId);
    await mkdir(join(path, '..'), { recursive: true });
    await writeFile(path, '{ "*": "ask", "write_file": { "*": "allow" }, "shell_exec": { "*": "ask" } }');
    const file = join(link.workdir, 'a.txt');
    await writeFile(file, 'a\n');
    return Object.assign(link, { file });
  }

  it('"always" for chmod 644 saves chmod *, which lets a harmless chmod run but asks for chmod -R 777 and says why', async () => {
    await using link = await startChmodLink();
    await using client = await clientOf(link);
    const { file } = link;

    const harmless = await asked(link, 'chmod 644 a.txt');
    expect(harmless.approval.alwaysPatterns).toEqual(['chmod *']);
    await client.rpc.approvals.approve.mutate({
      sessionId: harmless.sessionId,
      approvalId: harmless.approval.approvalId,
      scope: 'always',
    });
    expect((await harmless.call).meta?.errorKind).toBeUndefined();
    expect(await readFile(link.server.permissions.pathOf(link.worker.workerId), 'utf8')).toMatch(
      /"chmod \*": \{ "action": "allow", "grant": "g_[0-9a-f]{16}" \}/,
    );

    // The grant still lets other harmless chmods go without a question, in any session.
    const again = await link.server.toolCalls.run({
      workerId: link.worker.workerId,
      sessionId: randomUUID(),
      tool: 'shell_exec',
      args: { command: 'chmod 600 a.txt' },
      timeoutMs: 10_000,
    });
    expect(again.meta?.errorKind).toBeUndefined();
    expect(await modeOf(file)).toBe('600');

    const destructive = await asked(link, 'chmod -R 777 .');
    expect(destructive.approval).toMatchObject({
      reason:
        'a saved "chmod *" does not cover a destructive command: chmod -R 777 . (chmod -R changes the permissions of everything under a directory)',
      alwaysPatterns: ['chmod -R 777 .'],
      alwaysNote:
        'chmod -R changes the permissions of everything under a directory, so "always" and "session" offer only this exact command, never a wider pattern.',
    });
    await client.rpc.approvals.deny.mutate({
      sessionId: destructive.sessionId,
      approvalId: destructive.approval.approvalId,
    });
    expect((await destructive.call).meta?.errorKind).toBe('permission_denied');
    expect(await modeOf(file)).toBe('600');
  });

  it('"session" for chmod 644 lets that session run another harmless chmod, and asks for chmod -R 777', async () => {
    await using link = await startChmodLink();
    await using client = await clientOf(link);
    const { file } = link;

    const harmless = await asked(link, 'chmod 644 a.txt');
    await client.rpc.approvals.approve.mutate({
      sessionId: harmless.sessionId,
      approvalId: harmless.approval.approvalId,
      scope: 'session',
    });
    expect((await harmless.call).meta?.errorKind).toBeUndefined();
    const again = await link.server.toolCalls.run({
      workerId: link.worker.workerId,
      sessionId: harmless.sessionId,
      tool: 'shell_exec',
      args: { command: 'chmod 600 a.txt' },
      timeoutMs: 10_000,
    });
    expect(again.meta?.errorKind).toBeUndefined();

    const destructive = await asked(link, 'chmod -R 777 .', harmless.sessionId);
    expect(destructive.approval).toMatchObject({
      reason: expect.stringContaining('a saved "chmod *" does not cover a destructive command: chmod -R 777 .'),
      alwaysPatterns: ['chmod -R 777 .'],
    });
    await client.rpc.approvals.deny.mutate({
      sessionId: destructive.sessionId,
      approvalId: destructive.approval.approvalId,
    });
    await destructive.call;
    expect(await modeOf(file)).toBe('600');
  });
});

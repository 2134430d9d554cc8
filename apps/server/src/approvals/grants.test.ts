import { randomUUID } from 'node:crypto';
import { appendFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createMolfClient, type MolfClient } from '@molf/client/node';
import type { Approval } from '@molf/protocol';
import { createWorker } from '@molf/worker';
import { describe, expect, it } from 'vitest';
import {
  createTempDir,
  startTestLink,
  startTestServer,
  TEST_CLIENT_TOKEN,
  TEST_WORKER_TOKEN,
  waitFor,
} from '../testing/test-link.ts';

type Link = Awaited<ReturnType<typeof startTestLink>>;

const HOUR = 60 * 60 * 1000;
const GRANT_ID = /^g_[0-9a-f]{16}$/;

/** A clock the test moves by hand: grants expire when the test says so, not when the machine is slow. */
function createTestClock(start = Date.UTC(2026, 5, 1, 12)) {
  let now = start;
  return {
    now: () => now,
    advance: (ms: number) => {
      now += ms;
    },
  };
}

async function clientOf(link: Link, name = 'molf-test/1.0'): Promise<MolfClient> {
  const client = createMolfClient({ url: link.server.url, token: TEST_CLIENT_TOKEN, client: name });
  await client.ready();
  return client;
}

/** Runs a call, waits until it asks, and returns the call and its approval. */
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

/** Runs a call that must not ask: its result, or a failure if it waits for a person. */
async function ranWithoutAsking(link: Link, command: string) {
  let done = false;
  const running = link.server.toolCalls
    .run({
      workerId: link.worker.workerId,
      sessionId: randomUUID(),
      tool: 'shell_exec',
      args: { command },
      timeoutMs: 10_000,
    })
    .finally(() => {
      done = true;
    });
  const asking = link.server.gate.pending().some((approval) => approval.args.command === command);
  await waitFor(() => done || link.server.gate.pending().some((approval) => approval.args.command === command), {
    what: `"${command}" to run or ask`,
  });
  if (asking || !done) {
    link.server.gate.close();
    throw new Error(`"${command}" asked for approval`);
  }
  return running;
}

/** Answers an approval `asked` returned, with the scope, patterns and expiry given. */
function approveWith(
  client: MolfClient,
  waiting: { sessionId: string; approval: Approval },
  fields: { scope: 'once' | 'session' | 'always'; patterns?: string[]; expiresAt?: string },
) {
  return client.rpc.approvals.approve.mutate({
    sessionId: waiting.sessionId,
    approvalId: waiting.approval.approvalId,
    ...fields,
  });
}

async function auditRecords(link: Link): Promise<Array<Record<string, unknown>>> {
  const text = await readFile(join(link.server.dataDir, 'audit', 'approvals.jsonl'), 'utf8');
  return text
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

const permissionsText = (link: Link) => readFile(link.server.permissions.pathOf(link.worker.workerId), 'utf8');

describe('"always" with edited patterns', () => {
  it('saves the edited pattern as a grant: a call it matches then runs without asking, one it does not match still asks', async () => {
    await using link = await startTestLink();
    await using client = await clientOf(link);
    const first = await asked(link, 'echo hello world');
    expect(first.approval.alwaysPatterns).toEqual(['echo *']);
    await approveWith(client, first, {
      scope: 'always',
      patterns: ['echo hello *'],
    });
    expect((await first.call).output).toContain('hello world');
    expect(await permissionsText(link)).toMatch(/"echo hello \*": \{ "action": "allow", "grant": "g_[0-9a-f]{16}" \}/);
    expect(await permissionsText(link)).not.toContain('"echo *"');

    expect((await ranWithoutAsking(link, 'echo hello again')).output).toContain('hello again');
    const other = await asked(link, 'echo bye');
    expect(other.approval.alwaysPatterns).toEqual(['echo *']);
    link.server.gate.close();
    await other.call;
  });

  it('approves the call even when the edited pattern does not cover it, and records that it does not', async () => {
    await using link = await startTestLink();
    await using client = await clientOf(link);
    const first = await asked(link, 'echo not-covered');
    await approveWith(client, first, {
      scope: 'always',
      patterns: ['npm test'],
    });
    expect((await first.call).output).toContain('not-covered');
    const records = await auditRecords(link);
    expect(records.find((record) => record.decision === 'approved')).toMatchObject({
      approvalId: first.approval.approvalId,
      scope: 'always',
      rules: ['npm test'],
      offeredPatterns: ['echo *'],
      coversCall: false,
      client: 'molf-test/1.0',
    });
    expect(records.find((record) => record.decision === 'rules_changed')).toMatchObject({
      rules: ['npm test'],
      coversCall: false,
      subjects: ['echo not-covered'],
    });
    // Nothing saved lets the same call run again without a person.
    const again = await asked(link, 'echo not-covered');
    link.server.gate.close();
    await again.call;
  });

  it('counts the rules the file already has when it records whether the offered patterns cover the call', async () => {
    await using link = await startTestLink();
    await using client = await clientOf(link);
    const path = link.server.permissions.pathOf(link.worker.workerId);
    await mkdir(join(path, '..'), { recursive: true });
    await writeFile(path, '{ "*": "ask", "shell_exec": { "*": "ask", "pwd": "allow", "rm *": "deny" } }');
    const first = await asked(link, 'pwd && echo covered');
    expect(first.approval.alwaysPatterns).toEqual(['echo *']);
    await approveWith(client, first, {
      scope: 'always',
    });
    expect((await first.call).output).toContain('covered');
    expect((await auditRecords(link)).find((record) => record.decision === 'rules_changed')).toMatchObject({
      rules: ['echo *'],
      coversCall: true,
    });
    expect((await auditRecords(link)).find((record) => record.decision === 'rules_changed')).not.toHaveProperty(
      'offeredPatterns',
    );
    // Saved before the deny, as the offered patterns always were.
    expect(await permissionsText(link)).toMatch(
      /"echo \*": \{ "action": "allow", "grant": "g_[0-9a-f]{16}" \}, "rm \*": "deny"/,
    );
  });

  it('refuses a pattern the file would not take, naming it, saves nothing and keeps the approval waiting', async () => {
    await using link = await startTestLink();
    const first = await asked(link, 'echo kept-waiting');
    const before = await permissionsText(link);
    const by = { credentialId: 'alice', connectionId: 'c1' };
    const answer = { sessionId: first.sessionId, approvalId: first.approval.approvalId, scope: 'always', by } as const;
    await expect(link.server.gate.approve({ ...answer, patterns: ['echo *', ''] })).rejects.toMatchObject({
      code: 'invalid_input',
      field: 'patterns.1',
      message: 'the pattern "" cannot be saved: a pattern cannot be empty (use "*" for everything)',
    });
    const long = `echo ${'x'.repeat(5000)}`;
    await expect(link.server.gate.approve({ ...answer, patterns: [long] })).rejects.toMatchObject({
      code: 'invalid_input',
      message: expect.stringMatching(
        /^the pattern "echo x+" cannot be saved: a pattern is longer than 4096 characters$/,
      ),
    });
    expect(await permissionsText(link)).toBe(before);
    expect(link.server.gate.pending().map((approval) => approval.approvalId)).toEqual([first.approval.approvalId]);
    expect(await link.server.gate.approve({ ...answer, patterns: ['echo kept-*'] })).toEqual({ applied: true });
    expect((await first.call).output).toContain('kept-waiting');
  });

  it('uses the edited patterns for "session" too, and refuses patterns with "once"', async () => {
    await using link = await startTestLink();
    await using client = await clientOf(link);
    const first = await asked(link, 'echo in-session');
    await expect(
      approveWith(client, first, {
        scope: 'once',
        patterns: ['echo *'],
      }),
    ).rejects.toMatchObject({ data: { code: 'invalid_input', field: 'patterns' } });
    await approveWith(client, first, {
      scope: 'session',
      patterns: ['echo in-*'],
    });
    await first.call;
    const inSession = await link.server.toolCalls.run({
      workerId: link.worker.workerId,
      sessionId: first.sessionId,
      tool: 'shell_exec',
      args: { command: 'echo in-again' },
      timeoutMs: 10_000,
    });
    expect(inSession.output).toContain('in-again');
    const outside = await asked(link, 'echo other', first.sessionId);
    link.server.gate.close();
    await outside.call;
  });
});

describe('grants that expire', () => {
  it('applies a time-limited grant until its expiry by the server clock, and asks again after', async () => {
    const clock = createTestClock();
    await using link = await startTestLink({ server: { now: clock.now } });
    await using client = await clientOf(link);
    const first = await asked(link, 'echo limited');
    const expiresAt = new Date(clock.now() + HOUR).toISOString();
    await approveWith(client, first, {
      scope: 'always',
      expiresAt,
    });
    await first.call;
    expect(await permissionsText(link)).toMatch(
      new RegExp(`"echo \\*": \\{ "action": "allow", "grant": "g_[0-9a-f]{16}", "expires": "${expiresAt}" \\}`),
    );
    clock.advance(HOUR - 1);
    expect((await ranWithoutAsking(link, 'echo still')).output).toContain('still');
    clock.advance(1);
    const after = await asked(link, 'echo expired');
    expect(after.approval.reason).toMatch(/^the rule "shell_exec": "ask" \(permissions\.jsonc line \d+\) asks$/);
    const { grants } = await client.rpc.permissions.grants.query({ workerId: link.worker.workerId });
    expect(grants).toMatchObject([{ pattern: 'echo *', expiresAt, expired: true }]);
    link.server.gate.close();
    await after.call;
  });

  it('refuses an expiry in the past, one more than 366 days ahead, and one with "session"', async () => {
    const clock = createTestClock();
    await using link = await startTestLink({ server: { now: clock.now } });
    await using client = await clientOf(link);
    const first = await asked(link, 'echo x');
    const answer = { sessionId: first.sessionId, approvalId: first.approval.approvalId } as const;
    for (const expiresAt of [clock.now() - 1, clock.now(), clock.now() + 366 * 24 * HOUR + 1]) {
      await expect(
        client.rpc.approvals.approve.mutate({
          ...answer,
          scope: 'always',
          expiresAt: new Date(expiresAt).toISOString(),
        }),
      ).rejects.toMatchObject({
        data: { code: 'invalid_input', field: 'expiresAt' },
        message: expect.stringContaining("the server's time"),
      });
    }
    await expect(
      client.rpc.approvals.approve.mutate({
        ...answer,
        scope: 'session',
        expiresAt: new Date(clock.now() + HOUR).toISOString(),
      }),
    ).rejects.toMatchObject({ data: { code: 'invalid_input', field: 'expiresAt' } });
    expect(await permissionsText(link)).not.toMatch(/"grant": "g_[0-9a-f]{16}"/);
    // A full 366 days is still taken.
    await client.rpc.approvals.approve.mutate({
      ...answer,
      scope: 'always',
      expiresAt: new Date(clock.now() + 366 * 24 * HOUR).toISOString(),
    });
    await first.call;
  });
});

describe('a hand-edited expiry', () => {
  it('that is not a date makes the file a problem with line and column, and the grant does not apply', async () => {
    await using link = await startTestLink();
    await using client = await clientOf(link);
    const path = link.server.permissions.pathOf(link.worker.workerId);
    await mkdir(join(path, '..'), { recursive: true });
    await writeFile(
      path,
      '{\n  "*": "ask",\n  "shell_exec": {\n    "echo *": { "action": "allow", "grant": "g_1", "expires": "next week" }\n  }\n}\n',
    );
    const first = await asked(link, 'echo not-yet');
    expect(link.server.gate.problems()).toEqual([
      {
        workerId: link.worker.workerId,
        file: path,
        line: 4,
        column: 63,
        message: expect.stringMatching(/^"shell_exec" → "echo \*": "expires" must be a date and time such as /),
        fallback: 'ask_everything',
      },
    ]);
    const listed = await client.rpc.permissions.grants.query({ workerId: link.worker.workerId });
    expect(listed).toMatchObject({ grants: [], problem: { line: 4, column: 63 } });
    await expect(
      client.rpc.permissions.revoke.mutate({ workerId: link.worker.workerId, grantId: 'g_1' }),
    ).rejects.toMatchObject({
      data: { code: 'permissions_invalid' },
      message: expect.stringContaining('line 4, column 63'),
    });
    link.server.gate.close();
    await first.call;
  });
});

describe('permissions.grants', () => {
  it('lists each grant with when, by whom, from which client and for which call it was given', async () => {
    const clock = createTestClock();
    await using link = await startTestLink({ server: { now: clock.now } });
    await using client = await clientOf(link, 'molf-web/0.1.0');
    const first = await asked(link, 'git --version');
    const expiresAt = new Date(clock.now() + 24 * HOUR).toISOString();
    await approveWith(client, first, {
      scope: 'always',
      expiresAt,
    });
    await first.call;
    const listed = await client.rpc.permissions.grants.query({ workerId: link.worker.workerId });
    expect(listed.path).toBe(link.server.permissions.pathOf(link.worker.workerId));
    expect(listed.grants).toEqual([
      {
        grantId: expect.stringMatching(GRANT_ID),
        workerId: link.worker.workerId,
        tool: 'shell_exec',
        pattern: 'git --version',
        action: 'allow',
        line: expect.any(Number),
        expiresAt,
        expired: false,
        givenAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        givenBy: { credentialId: 'fixed-client' },
        client: 'molf-web/0.1.0',
        connectionId: expect.any(String),
        approvalId: first.approval.approvalId,
        sessionId: first.sessionId,
        toolCallId: first.approval.toolCallId,
        subjects: ['git --version'],
      },
    ]);
    const text = await permissionsText(link);
    expect(text.split('\n')[(listed.grants[0]?.line ?? 0) - 1]).toContain(listed.grants[0]?.grantId);
  });

  it('leaves out a grant whose rule was deleted by hand, and lists a hand-written grant id with what its rule says', async () => {
    await using link = await startTestLink();
    await using client = await clientOf(link);
    const first = await asked(link, 'echo one');
    await approveWith(client, first, {
      scope: 'always',
    });
    await first.call;
    const path = link.server.permissions.pathOf(link.worker.workerId);
    await writeFile(
      path,
      '{ "*": "ask", "shell_exec": { "make *": { "action": "allow", "grant": "mine", "expires": "2030-01-01T00:00:00+01:00" } } }',
    );
    const { grants } = await client.rpc.permissions.grants.query({ workerId: link.worker.workerId });
    expect(grants).toEqual([
      {
        grantId: 'mine',
        workerId: link.worker.workerId,
        tool: 'shell_exec',
        pattern: 'make *',
        action: 'allow',
        line: 1,
        expiresAt: '2029-12-31T23:00:00.000Z',
        expired: false,
        subjects: [],
      },
    ]);
  });

  it('finds how a grant was given in the audit log after the server restarts', async () => {
    await using data = await createTempDir();
    await using workdir = await createTempDir();
    let grantId: string | undefined;
    {
      await using server = await startTestServer({ dataDir: data.path });
      await using worker = await createWorker({
        serverUrl: server.url,
        token: TEST_WORKER_TOKEN,
        workdir: workdir.path,
      });
      await worker.registered;
      const link = { server, worker, workdir: workdir.path } as unknown as Link;
      await using client = await clientOf(link);
      const first = await asked(link, 'echo before-restart');
      await approveWith(client, first, {
        scope: 'always',
      });
      await first.call;
      grantId = (await server.grants.list(worker.workerId)).grants[0]?.grantId;
    }
    // A record that mentions grants but is torn, as a crash mid-write leaves it: skipped.
    await appendFile(join(data.path, 'audit', 'approvals.jsonl'), '{"decision":"rules_changed","grants":[{"gr\n');
    await using server = await startTestServer({ dataDir: data.path });
    await using worker = await createWorker({ serverUrl: server.url, token: TEST_WORKER_TOKEN, workdir: workdir.path });
    await worker.registered;
    const { grants } = await server.grants.list(worker.workerId);
    expect(grants).toMatchObject([
      { grantId, pattern: 'echo *', client: 'molf-test/1.0', subjects: ['echo before-restart'] },
    ]);
  });
});

describe('permissions.revoke', () => {
  it('removes the grant from the file, records who revoked it, and the next call asks again', async () => {
    await using link = await startTestLink();
    await using client = await clientOf(link);
    const first = await asked(link, 'echo granted');
    await approveWith(client, first, {
      scope: 'always',
    });
    await first.call;
    expect((await ranWithoutAsking(link, 'echo allowed-now')).output).toContain('allowed-now');
    const [grant] = (await client.rpc.permissions.grants.query({ workerId: link.worker.workerId })).grants;
    const grantId = grant?.grantId ?? '';

    expect(await client.rpc.permissions.revoke.mutate({ workerId: link.worker.workerId, grantId })).toEqual({
      grantId,
      tool: 'shell_exec',
      pattern: 'echo *',
    });
    expect(await permissionsText(link)).not.toContain(grantId);
    expect(await permissionsText(link)).toContain('// Molf approval rules for one worker.');
    expect((await client.rpc.permissions.grants.query({ workerId: link.worker.workerId })).grants).toEqual([]);
    expect((await auditRecords(link)).at(-1)).toMatchObject({
      decision: 'rules_changed',
      grantId,
      rules: ['echo *'],
      by: 'client:fixed-client',
      client: 'molf-test/1.0',
    });
    const again = await asked(link, 'echo allowed-now');
    link.server.gate.close();
    await again.call;
  });

  it('stops applying in the very session that gave it once expired: "always" leaves no session copy', async () => {
    const clock = createTestClock();
    await using link = await startTestLink({ server: { now: clock.now } });
    await using client = await clientOf(link);
    const first = await asked(link, 'echo mine');
    await approveWith(client, first, {
      scope: 'always',
      expiresAt: new Date(clock.now() + HOUR).toISOString(),
    });
    await first.call;
    clock.advance(HOUR);
    const expired = await asked(link, 'echo mine again', first.sessionId);
    link.server.gate.close();
    await expired.call;
  });

  it('stops applying in the session that gave it once revoked', async () => {
    await using link = await startTestLink();
    await using client = await clientOf(link);
    const first = await asked(link, 'echo ours');
    await approveWith(client, first, {
      scope: 'always',
    });
    await first.call;
    const [grant] = (await client.rpc.permissions.grants.query({ workerId: link.worker.workerId })).grants;
    await client.rpc.permissions.revoke.mutate({ workerId: link.worker.workerId, grantId: grant?.grantId ?? '' });
    const again = await asked(link, 'echo ours again', first.sessionId);
    link.server.gate.close();
    await again.call;
  });

  it('loses neither change when a revoke and an "always" save of the same file run at once', async () => {
    await using link = await startTestLink();
    const { permissions } = link.server;
    const workerId = link.worker.workerId;
    await permissions.load(workerId);
    await permissions.appendAllow(workerId, {
      tool: 'shell_exec',
      patterns: ['make *'],
      grants: new Map([['make *', { grant: 'g_make' }]]),
    });
    await Promise.all([
      permissions.removeGrant(workerId, 'g_make'),
      permissions.appendAllow(workerId, {
        tool: 'shell_exec',
        patterns: ['npm test'],
        grants: new Map([['npm test', { grant: 'g_npm' }]]),
      }),
    ]);
    const { rules } = await permissions.load(workerId);
    expect(rules.filter((rule) => rule.grant !== undefined).map((rule) => rule.grant)).toEqual(['g_npm']);
  });

  it('refuses an unknown grant id with grant_not_found and changes nothing', async () => {
    await using link = await startTestLink();
    await using client = await clientOf(link);
    const before = await client.rpc.permissions.show.query({ workerId: link.worker.workerId });
    await expect(
      client.rpc.permissions.revoke.mutate({ workerId: link.worker.workerId, grantId: 'g_0000000000000000' }),
    ).rejects.toMatchObject({
      data: { code: 'grant_not_found' },
      message: expect.stringContaining('has no grant g_0000000000000000'),
    });
    expect((await client.rpc.permissions.show.query({ workerId: link.worker.workerId })).version).toBe(before.version);
  });
});

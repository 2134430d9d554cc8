import { randomUUID } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Approval } from '@molf/protocol';
import { createWorker } from '@molf/worker';
import { describe, expect, it } from 'vitest';
import type { MolfServer } from '../create-server.ts';
import { createTempDir, startTestLink, startTestServer, TEST_WORKER_TOKEN, waitFor } from '../testing/test-link.ts';

const BY = { credentialId: 'test', connectionId: 'test' };

/** Runs one call of a session on a worker and waits until it asks; returns the call and its approval. */
async function asked(server: MolfServer, call: { workerId: string; tool: string; args: Record<string, unknown> }) {
  const sessionId = randomUUID();
  const running = server.toolCalls.run({ ...call, workerId: call.workerId as never, sessionId, timeoutMs: 10_000 });
  let approval: Approval | undefined;
  await waitFor(
    () => {
      approval = server.gate.pending().find((candidate) => candidate.sessionId === sessionId);
      return approval !== undefined;
    },
    { what: `${call.tool} to ask` },
  );
  return { running, approval: approval as Approval, sessionId };
}

describe('the seeded rules of a new worker', () => {
  it('ask before write_file and edit_file, and the file is untouched until a person approves', async () => {
    await using link = await startTestLink();
    const { workerId } = link.worker;
    const target = join(link.workdir, 'notes.txt');

    const write = await asked(link.server, {
      workerId,
      tool: 'write_file',
      args: { path: 'notes.txt', content: 'v1\n' },
    });
    expect(write.approval.subjects).toEqual([
      { kind: 'path', label: 'notes.txt', decision: 'ask', rule: expect.stringMatching(/^"write_file": "ask"/) },
    ]);
    expect(write.approval.alwaysPatterns).toEqual(['notes.txt']);
    await expect(readFile(target, 'utf8')).rejects.toMatchObject({ code: 'ENOENT' });
    await link.server.gate.approve({
      sessionId: write.sessionId,
      approvalId: write.approval.approvalId,
      scope: 'once',
      by: BY,
    });
    expect((await write.running).error).toBeUndefined();
    expect(await readFile(target, 'utf8')).toBe('v1\n');

    const edit = await asked(link.server, {
      workerId,
      tool: 'edit_file',
      args: { path: 'notes.txt', oldString: 'v1', newString: 'v2' },
    });
    expect(edit.approval.subjects[0]).toMatchObject({
      decision: 'ask',
      rule: expect.stringMatching(/^"edit_file": "ask"/),
    });
    expect(await readFile(target, 'utf8')).toBe('v1\n');
    link.server.gate.deny({ sessionId: edit.sessionId, approvalId: edit.approval.approvalId, by: BY });
    expect((await edit.running).meta?.errorKind).toBe('permission_denied');
    expect(await readFile(target, 'utf8')).toBe('v1\n');
  });

  it('ask before a shell line writes a file in the workdir, and offer no "always" for it', async () => {
    await using link = await startTestLink();
    const line = await asked(link.server, {
      workerId: link.worker.workerId,
      tool: 'shell_exec',
      args: { command: 'echo hi > out.txt' },
    });
    expect(line.approval.subjects).toContainEqual(
      expect.objectContaining({
        label: '> out.txt writes out.txt',
        decision: 'ask',
        rule: expect.stringMatching(/^"write_file": "ask"/),
      }),
    );
    expect(line.approval.alwaysPatterns).toBeNull();
    link.server.gate.deny({ sessionId: line.sessionId, approvalId: line.approval.approvalId, by: BY });
    await line.running;
  });
});

describe('a worker whose rules file already exists', () => {
  it('keeps it byte for byte across a server restart, and its rules (writes allowed) still decide', async () => {
    await using data = await createTempDir();
    await using workdir = await createTempDir();
    // A file an older Molf seeded and its person edited: comments and layout of their own.
    const own = [
      '// my rules, from an older Molf',
      '{',
      '  "*": "ask",',
      '  "write_file": { "*": "allow" },   // writes go',
      '  "edit_file":   "allow"',
      '}',
      '',
    ].join('\n');

    const first = await startTestServer({ dataDir: data.path });
    let path: string;
    try {
      const worker = await createWorker({ serverUrl: first.url, token: TEST_WORKER_TOKEN, workdir: workdir.path });
      try {
        await worker.registered;
        path = first.permissions.pathOf(worker.workerId);
        await mkdir(dirname(path), { recursive: true });
        await writeFile(path, own);
      } finally {
        await worker.close();
      }
    } finally {
      await first.close();
    }

    const server = await startTestServer({ dataDir: data.path });
    try {
      const worker = await createWorker({ serverUrl: server.url, token: TEST_WORKER_TOKEN, workdir: workdir.path });
      try {
        await worker.registered;
        expect(server.permissions.pathOf(worker.workerId)).toBe(path);
        const sessionId = randomUUID();
        const run = (tool: string, args: Record<string, unknown>) =>
          server.toolCalls.run({ workerId: worker.workerId, sessionId, tool, args, timeoutMs: 10_000 });
        expect((await run('write_file', { path: 'a.txt', content: 'one\n' })).error).toBeUndefined();
        expect((await run('edit_file', { path: 'a.txt', oldString: 'one', newString: 'two' })).error).toBeUndefined();
        expect(await readFile(join(workdir.path, 'a.txt'), 'utf8')).toBe('two\n');
        expect(server.gate.pending()).toEqual([]);
        expect(await readFile(path, 'utf8')).toBe(own);
      } finally {
        await worker.close();
      }
    } finally {
      await server.close();
    }
  });
});

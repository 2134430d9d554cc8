import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createWorker, prepareSandbox } from '@molf/worker';
import { describe, expect, it } from 'vitest';
import { createTempDir, startTestLink, startTestServer, TEST_WORKER_TOKEN } from '../testing/test-link.ts';

/** Why the sandbox cannot run here (tests skip with it, printed), or undefined. */
async function sandboxUnavailable(): Promise<string | undefined> {
  await using workdir = await createTempDir('molf-sandbox-probe-');
  const prepared = await prepareSandbox({ config: { mode: 'on' }, workdir: workdir.path, env: process.env });
  return prepared.status.active ? undefined : `the sandbox cannot run here: ${prepared.status.selfTest?.failed}`;
}
const unavailable = await sandboxUnavailable();
// CI must run them: a machine where they cannot is a failed run, not a quiet skip.
if (unavailable !== undefined && process.env.CI === 'true') {
  throw new Error(`CI=true, so the worker sandbox tests must run, but they cannot: ${unavailable}`);
}
if (unavailable !== undefined) process.stderr.write(`SKIPPED worker sandbox tests: ${unavailable}\n`);

/** Keeps --cap-drop out of the bwrap options: a sandbox the self-test must catch. */
const keepCapabilities = (args: string[]) =>
  args.filter((arg, index) => arg !== '--cap-drop' && args[index - 1] !== '--cap-drop');

async function health(httpUrl: string): Promise<{ workers: { sandbox: Record<string, number> } }> {
  return (await (await fetch(`${httpUrl}/healthz`)).json()) as { workers: { sandbox: Record<string, number> } };
}

describe.skipIf(unavailable !== undefined)('a worker with a sandbox, against a real server', () => {
  it('reports an active sandbox in its registration, the worker list and /healthz (counts only)', async () => {
    await using link = await startTestLink({ worker: { sandbox: { mode: 'on', network: false } } });
    expect(link.worker.sandbox).toMatchObject({ mode: 'on', active: true, network: false, mcp: true });
    expect(link.server.registry.get(link.worker.workerId)?.sandbox).toMatchObject({
      active: true,
      network: false,
      selfTest: { ok: true },
    });
    const report = await health(link.server.httpUrl);
    expect(report.workers.sandbox).toEqual({ on: 1, failed: 0, off: 0 });
    expect(JSON.stringify(report)).not.toContain(link.workdir);
  });

  it('in mode on, runs without the sandbox when the self-test fails, and says failed everywhere', async () => {
    await using link = await startTestLink({
      worker: { sandbox: { mode: 'on', testOnlyRewriteArguments: keepCapabilities } },
    });
    expect(link.worker.sandbox.active).toBe(false);
    expect(link.server.registry.get(link.worker.workerId)?.sandbox?.selfTest?.failed).toMatch(/capabilities/);
    expect((await health(link.server.httpUrl)).workers.sandbox).toEqual({ on: 0, failed: 1, off: 0 });
    // Unsandboxed: the command sees the worker's process.
    const result = await link.server.dispatcher.dispatch({
      workerId: link.worker.workerId,
      toolName: 'shell_exec',
      args: { command: `test -r /proc/${process.pid}/environ && echo VISIBLE` },
      timeoutMs: 20_000,
    });
    expect(result.output).toContain('VISIBLE');
  });

  it('in mode required, refuses to start when the self-test fails', async () => {
    await using data = await createTempDir();
    await using workdir = await createTempDir();
    await using server = await startTestServer({ dataDir: data.path });
    await expect(
      createWorker({
        serverUrl: server.url,
        token: TEST_WORKER_TOKEN,
        workdir: workdir.path,
        sandbox: { mode: 'required', testOnlyRewriteArguments: keepCapabilities },
      }),
    ).rejects.toMatchObject({ code: 'sandbox_failed', message: expect.stringContaining('capabilities') });
    expect(server.registry.list()).toEqual([]);
  });

  it('turns a refused write into a sandbox_refused tool error and an audit line on the server', async () => {
    await using link = await startTestLink({ worker: { sandbox: { mode: 'required' } } });
    await link.server.permissions.writeText(link.worker.workerId, '{ "*": "allow" }');
    const sessionId = randomUUID();
    const result = await link.server.toolCalls.run({
      sessionId,
      workerId: link.worker.workerId,
      tool: 'shell_exec',
      args: { command: 'echo x > /usr/molf-sandbox-escape.txt' },
      timeoutMs: 20_000,
    });
    expect(result.meta?.errorKind).toBe('sandbox_refused');
    expect(result.output).toContain('Read-only file system');
    expect(result.error).toContain('Writable:');
    await link.server.close();
    const lines = (await readFile(join(link.server.dataDir, 'audit', 'approvals.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.at(-1)).toMatchObject({
      decision: 'sandbox_refused',
      by: 'sandbox: read_only',
      tool: 'shell_exec',
      sessionId,
      subjects: ['echo x > /usr/molf-sandbox-escape.txt'],
    });
  });
});

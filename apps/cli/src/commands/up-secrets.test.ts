import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMolfClient } from '@molf/client/node';
import { startFakeLlm } from '@molf/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { spawnMolf, stopSpawnedProcesses, WAIT_DEADLINE_MS, waitForOutput } from '../testing/cli-test-kit.ts';

const cleanups: Array<() => Promise<unknown>> = [];

afterEach(async () => {
  // The processes first: the cleanups remove directories they use.
  await stopSpawnedProcesses();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function tempDir(): Promise<string> {
  const path = await mkdtemp(join(tmpdir(), 'molf-up-secrets-'));
  cleanups.push(() => rm(path, { recursive: true, force: true, maxRetries: 3 }));
  return path;
}

async function waitFor(predicate: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + WAIT_DEADLINE_MS;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Every file below `dir`, recursively. */
async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((entry) => entry.isFile()).map((entry) => join(entry.parentPath, entry.name));
}

/** Anything shaped like a Molf token; the pattern never matches its own text, so the scan can't find itself. */
const TOKEN_SHAPE = 'molf_[cw]_[A-Za-z0-9_-]{16,}';

/**
 * Prints every distinct token-shaped string in every `/proc/<pid>/environ` and `cmdline` this shell
 * can read. It cannot know the tokens it looks for (they would be in its own command line).
 */
const SCAN_PROC = [
  // The files are named when the line runs: the default rules deny reading /proc/*/environ by
  // name, and what this tests is what the OS lets an approved command reach.
  `grep -ahoE '${TOKEN_SHAPE}' $(echo /proc/[0-9]*/environ /proc/[0-9]*/cmdline) 2>/dev/null | sort -u`,
  'echo scan-finished',
].join('; ');

/** A value in `molf up`'s own environment, shaped like a worker token: proves the scan reads environments. */
const CANARY = 'molf_w_canary-in-the-environment-of-molf-up';

describe('molf up keeps its tokens out of reach of the commands its worker runs', () => {
  it('a shell command scanning every readable /proc/*/environ and cmdline finds no token the server accepts', async () => {
    await using llm = await startFakeLlm({
      turns: [
        { toolCalls: [{ id: 'call_scan', name: 'shell_exec', arguments: { command: SCAN_PROC } }] },
        { text: 'done' },
      ],
    });
    const dataDir = await tempDir();
    const clientDir = await tempDir();
    const home = await tempDir();
    const project = join(await tempDir(), 'project');
    await mkdir(project);
    await writeFile(
      join(dataDir, 'config.jsonc'),
      JSON.stringify({ model: 'fake/m', providers: { fake: { baseURL: llm.baseURL } } }),
    );

    // Without the sandbox: its PID namespace would hide /proc, and this must hold without it.
    // Its own process group, so that stopping it stops `up`, the server and the worker together.
    const up = spawnMolf(['up', '--port', '0', '--data-dir', dataDir, '--sandbox', 'off'], {
      cwd: project,
      env: { HOME: home, MOLF_CLIENT_DIR: clientDir, MOLF_LOG_LEVEL: 'info', MOLF_TEST_CANARY: CANARY },
    });
    const banner = await waitForOutput(up, 'Ctrl-C stops everything');
    const url = /server: {2}(ws:\/\/\S+)/.exec(banner)?.[1] ?? '';
    const clientToken = /client token: (\S+)/.exec(banner)?.[1] ?? '';
    expect(clientToken).toMatch(/^molf_c_/);

    const client = createMolfClient({ url, token: clientToken });
    cleanups.push(() => client.close());
    await client.ready({ timeoutMs: WAIT_DEADLINE_MS });
    const [worker] = await client.rpc.workers.list.query();
    expect(worker).toBeDefined();
    const workerId = worker?.workerId as NonNullable<typeof worker>['workerId'];
    const session = await client.rpc.sessions.create.mutate({ workerId });
    await client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'look for tokens' });
    // The gate asks (the command reads /proc); a person approves it, as `molf chat` would.
    await waitFor(async () => {
      for (const approval of await client.rpc.approvals.list.query({ sessionId: session.sessionId })) {
        await client.rpc.approvals.approve.mutate({ sessionId: session.sessionId, approvalId: approval.approvalId });
      }
      return llm.requests.length >= 2;
    }, 'the approved tool result to reach the model');

    const toolMessage = llm.requests[1]?.messages.find((message) => message.role === 'tool');
    const output = JSON.stringify(toolMessage?.content);
    expect(output).toContain('scan-finished');
    // The scan really reads the environments of `molf up` and its children.
    expect(output).toContain(CANARY);
    expect(output).not.toContain(clientToken);

    // The worker token was never shown: every token-shaped string found (other Molf tests may be
    // running on this machine) must be one this server refuses.
    const found = new Set(output.match(new RegExp(TOKEN_SHAPE, 'g')) ?? []);
    found.delete(CANARY);
    for (const file of [...(await listFiles(dataDir)), ...(await listFiles(project))]) {
      const text = await readFile(file, 'utf8');
      expect(text, file).not.toContain(clientToken);
      for (const token of text.match(new RegExp(TOKEN_SHAPE, 'g')) ?? []) found.add(token);
    }
    found.delete(CANARY);
    const accepted: string[] = [];
    for (const token of found) {
      const probe = createMolfClient({ url, token, retryDelayMs: () => 60_000 });
      try {
        await probe.ready({ timeoutMs: WAIT_DEADLINE_MS });
        accepted.push(token);
      } catch {
        // refused: not one of this server's tokens
      } finally {
        await probe.close();
      }
    }
    expect(accepted).toEqual([]);
  });
});

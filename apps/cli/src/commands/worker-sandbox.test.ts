import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ToolResult, WorkerId } from '@molf/protocol';
import { createServer, type MolfServer } from '@molf/server';
import { afterEach, describe, expect, it } from 'vitest';
import {
  sandboxUnavailable,
  spawnMolf,
  stopSpawnedProcesses,
  waitForOutput,
  waitUntil,
} from '../testing/cli-test-kit.ts';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  // The processes first: the cleanups remove directories they use.
  await stopSpawnedProcesses();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const TOKENS = {
  client: 'molf_c_sandbox-test-client-token-0123',
  worker: 'molf_w_sandbox-test-worker-token-0123',
};

async function tempDir(prefix = 'molf-worker-sandbox-'): Promise<string> {
  const path = await realpath(await mkdtemp(join(tmpdir(), prefix)));
  cleanups.push(() => rm(path, { recursive: true, force: true }));
  return path;
}

const unavailable = await sandboxUnavailable();
if (unavailable !== undefined) process.stderr.write(`SKIPPED molf worker sandbox tests: ${unavailable}\n`);

async function isolatedEnv(): Promise<Record<string, string>> {
  return {
    MOLF_HOME: await tempDir(),
    MOLF_CLIENT_DIR: await tempDir(),
    MOLF_LOG_LEVEL: 'warn',
    MOLF_LOG_FILE: 'none',
    PATH: process.env.PATH ?? '/usr/bin:/bin',
  };
}

async function startServer(): Promise<MolfServer> {
  const server = await createServer({ port: 0, dataDir: await tempDir(), tokens: TOKENS });
  cleanups.push(() => server.close());
  return server;
}

/** `molf worker` as a child process in its own process group, stopped (with its group) after the test. */
function spawnWorker(args: string[], env: Record<string, string>) {
  return spawnMolf(['worker', ...args], { env: { ...env, MOLF_WORKER_TOKEN: TOKENS.worker }, extendEnv: false });
}

/**
 * Pids of the host's processes whose command line contains `text` (read from /proc, no pgrep
 * needed), or with `exactly` is `text`: the sleeps themselves, not the bwrap or shell that started
 * them (their command lines hold the text too, and exist before the sleeps run).
 */
function processesMatching(text: string, options: { exactly?: boolean } = {}): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const line = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' ').trim();
      if (options.exactly === true ? line === text : line.includes(text)) pids.push(Number(entry));
    } catch {
      // Ended meanwhile.
    }
  }
  return pids;
}

function until(predicate: () => boolean, what: string): Promise<void> {
  return waitUntil(predicate, { what });
}

/**
 * A `sleep` with a duration no other process uses, so it can be found on the host whatever its pid;
 * whatever is left of it after the test (a failed one) is killed by pid.
 */
function uniqueSleep(): string {
  const command = `sleep 3${String(Math.floor(Math.random() * 1e6)).padStart(6, '0')}.5`;
  cleanups.unshift(async () => {
    for (const pid of processesMatching(command)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Gone.
      }
    }
  });
  return command;
}

function runShell(server: MolfServer, workerId: string, command: string): Promise<ToolResult> {
  return server.dispatcher.dispatch({
    workerId: workerId as WorkerId,
    toolName: 'shell_exec',
    args: { command },
    timeoutMs: 120_000,
  });
}

async function startedWorker(args: string[]) {
  const server = await startServer();
  const env = await isolatedEnv();
  const workdir = await tempDir();
  const child = spawnWorker(['--server', server.url, '--workdir', workdir, ...args], env);
  const line = await waitForOutput(child, 'serving');
  const workerId = /\(([0-9a-f-]{36})\)/.exec(line)?.[1] ?? '';
  return { server, env, workdir, child, line, workerId };
}

describe('molf worker killed with SIGKILL', () => {
  it("takes its commands' background children along, also those of finished commands (no sandbox)", async () => {
    const { server, child, workerId } = await startedWorker([]);
    const leftBehind = uniqueSleep();
    const running = uniqueSleep();
    const runningChild = uniqueSleep();
    // A finished command that left a daemon behind in its process group…
    const finished = await runShell(server, workerId, `nohup ${leftBehind} >/dev/null 2>&1 & echo started`);
    expect(finished.output).toContain('started');
    // …and a running one with a background child.
    void runShell(server, workerId, `${runningChild} & ${running}`);
    await until(
      () => [leftBehind, running, runningChild].every((text) => processesMatching(text, { exactly: true }).length > 0),
      'the commands to run',
    );
    child.kill('SIGKILL');
    await child;
    await until(
      () =>
        [leftBehind, running, runningChild].every((text) => processesMatching(text, { exactly: true }).length === 0),
      'every command process to end',
    );
  });

  it.skipIf(unavailable !== undefined)('takes its sandboxed commands along (--die-with-parent)', async () => {
    const { server, child, workerId, line } = await startedWorker(['--sandbox', 'required']);
    expect(line).toContain('(sandbox: on)');
    const running = uniqueSleep();
    const runningChild = uniqueSleep();
    void runShell(server, workerId, `${runningChild} & ${running}`);
    await until(
      () => [running, runningChild].every((text) => processesMatching(text, { exactly: true }).length > 0),
      'the command',
    );
    child.kill('SIGKILL');
    await child;
    await until(
      () => [running, runningChild].every((text) => processesMatching(text, { exactly: true }).length === 0),
      'its end',
    );
  });
});

describe('molf worker --sandbox', () => {
  it('in mode required refuses to start, non-zero and saying why, when bwrap is missing', async () => {
    const env = { ...(await isolatedEnv()), PATH: '/nonexistent' };
    const child = spawnWorker(['--workdir', await tempDir(), '--sandbox', 'required'], env);
    const result = await child;
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain('the sandbox is required (--sandbox required) but its self-test failed');
    expect(result.stderr).toContain('bwrap is not installed');
  });

  it('in mode on starts without the sandbox when bwrap is missing, and says so on its start line', async () => {
    const server = await startServer();
    const env = { ...(await isolatedEnv()), PATH: '/nonexistent' };
    const child = spawnWorker(['--server', server.url, '--workdir', await tempDir(), '--sandbox'], env);
    expect(await waitForOutput(child, 'serving')).toContain('(sandbox: failed: bwrap is not installed');
  });

  it.skipIf(unavailable !== undefined)(
    'takes its settings from a config file, flags winning, and molf workers shows them',
    async () => {
      const configDir = await tempDir('molf-worker-config-');
      const config = join(configDir, 'worker.jsonc');
      await writeFile(
        config,
        '{\n  // the sandbox\n  "sandbox": { "mode": "required", "network": false, "mcp": false }\n}\n',
      );
      const { server, env, line } = await startedWorker(['--config', config, '--sandbox-mcp', 'on']);
      expect(line).toContain('(sandbox: on, network off)');
      const listed = await spawnMolf(['workers', '--server', server.url, '--token', TOKENS.client], {
        env,
        extendEnv: false,
      });
      expect(listed.stdout).toMatch(/SANDBOX[\s\S]*online\s+on, network off\s/);
      const json = await spawnMolf(['workers', '--json', '--server', server.url, '--token', TOKENS.client], {
        env,
        extendEnv: false,
      });
      expect(JSON.parse(json.stdout)[0].sandbox).toMatchObject({
        mode: 'required',
        active: true,
        network: false,
        mcp: true,
      });
    },
  );

  it.each([
    ['inside the workdir', (workdir: string) => join(workdir, 'worker.jsonc'), '{}', 'is inside the workdir'],
    ['with a syntax error', () => '', '{\n  "sandbox": { "mode": "on",, }\n}', 'line 2, column'],
    ['with an unknown mode', () => '', '{ "sandbox": { "mode": "sometimes" } }', '"sandbox.mode"'],
  ])('refuses a config file %s, saying where', async (_name, place, text, message) => {
    const workdir = await tempDir();
    const path = place(workdir) || join(await tempDir('molf-worker-config-'), 'worker.jsonc');
    await writeFile(path, text);
    const child = spawnWorker(['--workdir', workdir, '--config', path], await isolatedEnv());
    const result = await child;
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain(message);
  });
});

import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { type AddressInfo, createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleIsFresh } from '@molf/cli/bundle-is-fresh';
import { afterEach, describe, expect, it } from 'vitest';
import { spawnCommand, spawnMolf, stopSpawnedProcesses, waitForOutput, waitUntil } from './testing/cli-test-kit.ts';

const cleanups: Array<() => Promise<unknown>> = [];

afterEach(async () => {
  // The processes first: the cleanups remove directories they use.
  await stopSpawnedProcesses();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function tempDir(): Promise<string> {
  const path = await mkdtemp(join(tmpdir(), 'molf-cli-'));
  cleanups.push(() => rm(path, { recursive: true, force: true }));
  return path;
}

/** Env for a CLI run that touches only temp dirs. */
async function isolatedEnv(): Promise<Record<string, string>> {
  return {
    MOLF_HOME: await tempDir(),
    MOLF_CLIENT_DIR: await tempDir(),
    MOLF_LOG_LEVEL: 'warn',
    MOLF_LOG_FILE: 'none',
  };
}

/** A molf command run to its end (stopped with its process group if the test ends first). */
function molf(args: string[], options: { cwd?: string; env: Record<string, string> }) {
  return spawnMolf(args, options);
}

/** `molf server` on `port` (default: a free one), once its banner shows `until`. */
async function startMolfServer(env: Record<string, string>, options: { port?: number; until?: string } = {}) {
  const child = spawnMolf(['server', '--port', String(options.port ?? 0)], { env });
  const banner = await waitForOutput(child, options.until ?? 'data directory');
  const url = /listening on (ws:\/\/\S+)/.exec(banner)?.[1] ?? '';
  return { child, banner, url };
}

describe('molf CLI', () => {
  it('describes every command in --help', async () => {
    const env = await isolatedEnv();
    const result = await molf(['--help'], { env });
    expect(result.exitCode).toBe(0);
    for (const command of ['up', 'server', 'worker', 'workers', 'token']) {
      expect(result.stdout).toMatch(new RegExp(`^\\s+${command} `, 'm'));
    }
    const worker = await molf(['worker', '--help'], { env });
    expect(worker.stdout).toContain('MOLF_WORKER_TOKEN');
  });

  it('stops quietly when the reader of its output goes away (molf … | head)', async () => {
    const help = spawnMolf(['--help']);
    // The reading end closes before the CLI has written anything (it takes longer than this to start).
    help.stdout?.destroy();
    const result = await help;
    expect(result.stderr).toBe('');
    expect(result.exitCode).toBe(0);
  });

  it('scripts/molf runs the CLI from any directory', async () => {
    const launcher = fileURLToPath(new URL('../../../scripts/molf', import.meta.url));
    const result = await spawnCommand(launcher, ['workers', '--help'], { cwd: tmpdir() });
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain('Usage: molf workers');
  });

  it('molf tool runs a built-in tool in-process and prints its result', async () => {
    const env = await isolatedEnv();
    const workdir = await tempDir();
    await writeFile(join(workdir, 'notes.txt'), 'one\ntwo\n');
    const read = await molf(['tool', 'read_file', '{"path": "notes.txt", "startLine": 2}', '--workdir', workdir], {
      env,
    });
    expect(read.exitCode).toBe(0);
    expect(read.stdout).toBe('Content of notes.txt (2 lines, showing 2–2):\n     2\ttwo');

    const shell = await molf(['tool', 'shell_exec', '{"command": "exit 4"}', '--json'], { env, cwd: workdir });
    expect(JSON.parse(shell.stdout)).toEqual({ output: 'exit code: 4', meta: { exitCode: 4, truncated: false } });
    expect(shell.exitCode).toBe(0);

    const escaped = await molf(['tool', 'read_file', '{"path": "../x"}', '--workdir', workdir], { env });
    expect(escaped.exitCode).toBe(1);
    expect(escaped.stderr).toContain('read_file failed (workdir_escape)');

    const badJson = await molf(['tool', 'read_file', '{path'], { env, cwd: workdir });
    expect(badJson.exitCode).toBe(1);
    expect(badJson.stderr).toContain('the arguments are not valid JSON');
  });

  it('molf up starts a server and a worker, /healthz answers, molf workers shows it online, Ctrl-C stops both', async () => {
    const env = await isolatedEnv();
    const project = join(await tempDir(), 'my-project');
    await mkdir(project);
    const up = spawnMolf(['up', '--port', '0'], { cwd: project, env });
    const output = await waitForOutput(up, 'Ctrl-C stops everything');
    const httpUrl = /health: (http:\/\/127\.0\.0\.1:\d+)\/healthz/.exec(output)?.[1];
    expect(httpUrl).toBeDefined();

    const health = await fetch(`${httpUrl}/healthz`);
    expect(await health.json()).toMatchObject({ status: 'ok', workers: { online: 1 } });

    // From the project directory (and a subdirectory) no flags are needed.
    await mkdir(join(project, 'src'));
    const workers = await molf(['workers', '--json'], { cwd: join(project, 'src'), env });
    expect(workers.exitCode).toBe(0);
    expect(JSON.parse(workers.stdout)).toMatchObject([{ name: 'my-project', state: 'online' }]);

    up.kill('SIGINT');
    const result = await up;
    expect(result.exitCode).toBe(0);
    await expect(fetch(`${httpUrl}/healthz`)).rejects.toThrow();
  });

  // The built CLI only: from the sources `molf up` supervises in its own process.
  it.runIf(bundleIsFresh())(
    'molf up becomes the bundled supervisor (same pid, Node built-ins only) and still stops both on SIGTERM',
    async () => {
      const env = await isolatedEnv();
      const up = spawnMolf(['up', '--port', '0'], { cwd: await tempDir(), env });
      const output = await waitForOutput(up, 'Ctrl-C stops everything');
      const httpUrl = /health: (http:\/\/127\.0\.0\.1:\d+)\/healthz/.exec(output)?.[1];
      const commandLine = (await readFile(`/proc/${up.pid}/cmdline`, 'utf8')).split('\0');
      expect(commandLine.slice(1, 3)).toEqual([
        '--lite-mode',
        fileURLToPath(new URL('../dist/up-supervisor.cjs', import.meta.url)),
      ]);
      // The plan it was handed (no secret in it) is not passed on to its children.
      const children = (await readFile(`/proc/${up.pid}/task/${up.pid}/children`, 'utf8')).trim().split(' ');
      expect(children).toHaveLength(2);
      for (const child of children) {
        expect(await readFile(`/proc/${child}/environ`, 'utf8')).not.toContain('MOLF_UP_PLAN=');
      }
      up.kill('SIGTERM');
      expect((await up).exitCode).toBe(0);
      await expect(fetch(`${httpUrl}/healthz`)).rejects.toThrow();
    },
  );

  it('molf up stops the server and the worker when it is hung up on, leaving no child behind', async () => {
    const env = await isolatedEnv();
    const up = spawnMolf(['up', '--port', '0'], { cwd: await tempDir(), env });
    const output = await waitForOutput(up, 'Ctrl-C stops everything');
    const httpUrl = /health: (http:\/\/127\.0\.0\.1:\d+)\/healthz/.exec(output)?.[1];
    const children = (await readFile(`/proc/${up.pid}/task/${up.pid}/children`, 'utf8')).trim().split(' ');
    expect(children).toHaveLength(2);
    up.kill('SIGHUP');
    expect((await up).exitCode).toBe(129);
    await expect(fetch(`${httpUrl}/healthz`)).rejects.toThrow();
    for (const child of children) {
      await waitUntil(() => !existsSync(`/proc/${child}`), { what: `child ${child} to be gone` });
    }
  });

  it('molf up under node --watch (pnpm dev) starts real children and reports their URL', async () => {
    const env = await isolatedEnv();
    const project = await tempDir();
    // Like pnpm dev, which watches the sources, not the project: the worker writes .molf/ there, and a
    // watched project restarts the whole stack (once the CLI starts fast, after the banner was read).
    const watched = await tempDir();
    const up = spawnMolf(['up', '--port', '0'], { cwd: project, env, nodeOptions: [`--watch-path=${watched}`] });
    const output = await waitForOutput(up, 'Ctrl-C stops everything');
    const httpUrl = /health: (http:\/\/127\.0\.0\.1:\d+)\/healthz/.exec(output)?.[1];
    expect(httpUrl).toBeDefined();
    expect(await (await fetch(`${httpUrl}/healthz`)).json()).toMatchObject({ workers: { online: 1 } });
  });

  it('Ctrl-C in a terminal (SIGINT to the whole process group) lets the server and worker finish stopping', async () => {
    const env = { ...(await isolatedEnv()), MOLF_LOG_LEVEL: 'info' };
    const up = spawnMolf(['up', '--port', '0'], { cwd: await tempDir(), env });
    await waitForOutput(up, 'Ctrl-C stops everything');
    process.kill(-(up.pid as number), 'SIGINT');
    const result = await up;
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain('"msg":"worker stopped"');
    expect(result.stdout).toContain('"msg":"server stopped"');
  });

  it('a second molf worker on a copied project makes the first one exit non-zero, explaining why', async () => {
    const env = {
      ...(await isolatedEnv()),
      MOLF_CLIENT_TOKEN: 'molf_c_fixed-client-token-for-this-test',
      MOLF_WORKER_TOKEN: 'molf_w_fixed-worker-token-for-this-test',
    };
    const { url } = await startMolfServer(env);
    const project = await tempDir();
    const startWorker = () => {
      const worker = spawnMolf(['worker', '--server', url, '--workdir', project], { env });
      return worker;
    };
    const first = startWorker();
    await waitForOutput(first, 'serving');
    const second = startWorker();
    await waitForOutput(second, 'serving');
    const result = await first;
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain('another worker process registered with this worker id');
  });

  it('molf up on a port in use exits 1 with the reason instead of crashing', async () => {
    const env = await isolatedEnv();
    const blocker = createNetServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise((resolve) => blocker.close(resolve)));
    const { port } = blocker.address() as AddressInfo;
    const result = await molf(['up', '--port', String(port)], { cwd: await tempDir(), env });
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain(`port ${port} on 127.0.0.1 is already in use`);
    expect(result.stderr).toContain('the server stopped before it was ready');
    expect(result.stderr).not.toContain('Unhandled');
  });

  it('molf worker on a missing workdir fails with a clear error and a non-zero exit code', async () => {
    const env = await isolatedEnv();
    const result = await molf(['worker', '--token', 'molf_w_whatever-token-value', '--workdir', '/nonexistent/dir'], {
      env,
    });
    expect(result.exitCode).not.toBe(0);
    expect(result.stderr).toContain('workdir /nonexistent/dir does not exist');
  });

  it('molf server shows generated tokens once, and molf token create mints one the server accepts', async () => {
    const env = await isolatedEnv();
    const { child: first, banner, url } = await startMolfServer(env, { until: 'worker token:' });
    const clientToken = /client token: (\S+)/.exec(banner)?.[1] ?? '';
    expect(clientToken).toMatch(/^molf_c_/);

    const listed = await molf(['workers', '--server', url, '--token', clientToken], { env });
    expect(listed.exitCode).toBe(0);
    expect(listed.stdout).toContain('no workers registered');

    const wrong = await molf(['workers', '--server', url, '--token', 'molf_c_wrong-token-for-this-server'], { env });
    expect(wrong.exitCode).toBe(1);
    expect(wrong.stderr).toContain('invalid token');

    const created = await molf(['token', 'create', '--role', 'operator', '--label', 'ci'], { env });
    const minted = /: (molf_c_\S+)/.exec(created.stdout)?.[1] ?? '';
    expect(minted).not.toBe('');
    const withMinted = await molf(['workers', '--server', url, '--token', minted], { env });
    expect(withMinted.exitCode).toBe(0);

    first.kill('SIGTERM');
    expect((await first).exitCode).toBe(0);
    const second = await startMolfServer(env);
    expect(second.banner).not.toContain('token:');
  });

  it('molf worker with a wrong token exits non-zero saying the token is invalid', async () => {
    const env = await isolatedEnv();
    const { url } = await startMolfServer(env, { until: 'worker token:' });
    const result = await molf(
      ['worker', '--server', url, '--token', 'molf_w_not-the-right-token', '--workdir', await tempDir()],
      {
        env,
      },
    );
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain('invalid token');
  });

  it('a worker whose server was killed keeps retrying and re-registers when the server is back', async () => {
    const env = {
      ...(await isolatedEnv()),
      MOLF_CLIENT_TOKEN: 'molf_c_fixed-client-token-for-this-test',
      MOLF_WORKER_TOKEN: 'molf_w_fixed-worker-token-for-this-test',
    };
    const { child: first, url } = await startMolfServer(env);
    const port = Number(new URL(url).port);

    const worker = spawnMolf(['worker', '--server', url, '--workdir', await tempDir()], { env });
    await waitForOutput(worker, 'serving');

    first.kill('SIGKILL');
    await first;
    await startMolfServer(env, { port });

    const healthUrl = `http://127.0.0.1:${port}/healthz`;
    let online = 0;
    // The worker's backoff after the kill may have grown to many seconds; the deadline is generous.
    await waitUntil(
      async () => {
        online = await fetch(healthUrl)
          .then(async (response) => ((await response.json()) as { workers: { online: number } }).workers.online)
          .catch(() => 0);
        return online > 0;
      },
      { what: 'the worker to re-register' },
    );
    expect(online).toBe(1);
    expect(worker.pid !== undefined && process.kill(worker.pid, 0)).toBe(true);
  });
});

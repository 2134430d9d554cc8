import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { spawnMolf as spawnMolfChild, stopSpawnedProcesses, waitForOutput } from '../testing/cli-test-kit.ts';

const CLIENT_TOKEN = 'molf_c_token-file-test-client-token';
const WORKER_TOKEN = 'molf_w_token-file-test-worker-token';
const cleanups: Array<() => Promise<unknown>> = [];

afterEach(async () => {
  // The processes first: the cleanups remove directories they use.
  await stopSpawnedProcesses();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function tempDir(): Promise<string> {
  const path = await mkdtemp(join(tmpdir(), 'molf-token-files-'));
  cleanups.push(() => rm(path, { recursive: true, force: true, maxRetries: 3 }));
  return path;
}

async function writeTokenFile(dir: string, name: string, content: string, mode = 0o600): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, content, { mode });
  await chmod(path, mode);
  return path;
}

/** Env for a CLI run that touches only temp dirs and carries no token. */
async function isolatedEnv(): Promise<Record<string, string>> {
  return {
    MOLF_HOME: await tempDir(),
    MOLF_CLIENT_DIR: await tempDir(),
    MOLF_LOG_LEVEL: 'warn',
    MOLF_LOG_FILE: 'none',
  };
}

/** A molf command with only `env` (no inherited token variables), stopped with its group after the test. */
function molf(args: string[], env: Record<string, string>) {
  return spawnMolfChild(args, { env, extendEnv: false });
}

/** A long-running molf process, stopped with its process group after the test. */
function spawnMolf(args: string[], env: Record<string, string>) {
  return spawnMolfChild(args, { env, extendEnv: false });
}

describe('token files', () => {
  it('molf server takes fixed tokens from files, and molf worker --token-file connects with one', async () => {
    const env = await isolatedEnv();
    const secrets = await tempDir();
    const clientFile = await writeTokenFile(secrets, 'client', `${CLIENT_TOKEN}\n`);
    const workerFile = await writeTokenFile(secrets, 'worker', `${WORKER_TOKEN}\n`);
    const server = spawnMolf(
      ['server', '--port', '0', '--client-token-file', clientFile, '--worker-token-file', workerFile],
      env,
    );
    const banner = await waitForOutput(server, 'data directory', { stderr: true });
    // Fixed tokens: nothing generated, nothing shown.
    expect(banner).not.toContain('token:');
    const url = /listening on (ws:\/\/\S+)/.exec(banner)?.[1] ?? '';

    const worker = spawnMolf(
      ['worker', '--server', url, '--token-file', workerFile, '--workdir', await tempDir()],
      env,
    );
    await waitForOutput(worker, 'serving', { stderr: true });
    const listed = await molf(['workers', '--json', '--server', url, '--token', CLIENT_TOKEN], env);
    expect(listed.exitCode).toBe(0);
    expect(JSON.parse(listed.stdout)).toMatchObject([{ state: 'online' }]);
  });

  it('molf worker reads MOLF_WORKER_TOKEN_FILE, and warns when other users can read the file', async () => {
    const env = await isolatedEnv();
    const secrets = await tempDir();
    const server = spawnMolf(['server', '--port', '0'], {
      ...env,
      MOLF_CLIENT_TOKEN_FILE: await writeTokenFile(secrets, 'client', CLIENT_TOKEN),
      MOLF_WORKER_TOKEN_FILE: await writeTokenFile(secrets, 'worker', WORKER_TOKEN),
    });
    const url =
      /listening on (ws:\/\/\S+)/.exec(await waitForOutput(server, 'data directory', { stderr: true }))?.[1] ?? '';
    const loose = await writeTokenFile(secrets, 'loose', `${WORKER_TOKEN}\n`, 0o644);
    const worker = spawnMolf(['worker', '--server', url, '--workdir', await tempDir()], {
      ...env,
      MOLF_WORKER_TOKEN_FILE: loose,
    });
    const output = await waitForOutput(worker, 'serving', { stderr: true });
    expect(output).toContain(`other users can read the token file ${loose} (mode 0644): chmod 600 ${loose}`);
  });

  it('molf worker refuses a missing or empty token file, saying which', async () => {
    const env = await isolatedEnv();
    const secrets = await tempDir();
    const missing = join(secrets, 'missing');
    const absent = await molf(['worker', '--token-file', missing, '--workdir', secrets], env);
    expect(absent.exitCode).toBe(1);
    expect(absent.stderr).toContain(`cannot read the token file ${missing}`);

    const empty = await writeTokenFile(secrets, 'empty', '');
    const blank = await molf(['worker', '--token-file', empty, '--workdir', secrets], env);
    expect(blank.exitCode).toBe(1);
    expect(blank.stderr).toContain(`the token file ${empty} is empty`);
  });

  it('refuses a token given both directly and as a file', async () => {
    const env = await isolatedEnv();
    const file = await writeTokenFile(await tempDir(), 'worker', WORKER_TOKEN);
    const worker = await molf(['worker', '--token', WORKER_TOKEN, '--token-file', file], env);
    expect(worker.exitCode).toBe(1);
    expect(worker.stderr).toContain('--token or --token-file, not both');

    const server = await molf(['server', '--port', '0', '--client-token-file', file], {
      ...env,
      MOLF_CLIENT_TOKEN: CLIENT_TOKEN,
    });
    expect(server.exitCode).toBe(1);
    expect(server.stderr).toContain('--client-token or --client-token-file, not both');
  });
});

import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from '@molf/server';
import { afterEach, describe, expect, it } from 'vitest';
import { saveConnection } from '../connection-store.ts';
import { checkConnection, toHealthUrl } from './check-connection.ts';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function tempDir(): Promise<string> {
  const directory = await realpath(await mkdtemp(join(tmpdir(), 'molf-doctor-connection-')));
  cleanups.push(() => rm(directory, { recursive: true, force: true }));
  return directory;
}

/** A loopback port nothing listens on (it was free a moment ago). */
async function deadPort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('the connection check', () => {
  it('finds the health endpoint beside a WebSocket URL', () => {
    expect(toHealthUrl('ws://127.0.0.1:7600')).toBe('http://127.0.0.1:7600/healthz');
    expect(toHealthUrl('wss://molf.example.com/?x=1')).toBe('https://molf.example.com/healthz');
    expect(toHealthUrl('http://127.0.0.1:7600')).toBeUndefined();
  });

  it('is skipped when nothing is saved for the directory and MOLF_SERVER_URL is not set', async () => {
    const env = { MOLF_CLIENT_DIR: await tempDir() };
    expect((await checkConnection({ cwd: await tempDir(), env })).status).toBe('skipped');
  });

  it('says the saved server answers, with its workers', async () => {
    const dataDir = await tempDir();
    const server = await createServer({
      port: 0,
      dataDir,
      tokens: { client: 'molf_c_doctor_check_0001', worker: 'molf_w_doctor_check_0001' },
    });
    cleanups.push(() => server.close());
    const env = { MOLF_CLIENT_DIR: await tempDir() };
    const projectDir = await tempDir();
    await saveConnection({ projectDir, url: server.url, token: 'molf_c_doctor_check_0001', env });
    const check = await checkConnection({ cwd: projectDir, env });
    expect(check.status).toBe('ok');
    expect(check.summary).toMatch(
      new RegExp(
        `^server ${server.url} \\(saved by molf up for ${projectDir} in .+\\) answers \\(server \\S+, 0 of 0 workers online\\)$`,
      ),
    );
  });

  it('fails for a saved server that does not answer, with the molf up to run', async () => {
    const env = { MOLF_CLIENT_DIR: await tempDir() };
    const projectDir = await tempDir();
    const url = `ws://127.0.0.1:${await deadPort()}`;
    await saveConnection({ projectDir, url, token: 'molf_c_gone', env });
    expect(await checkConnection({ cwd: join(projectDir), env })).toEqual({
      id: 'connection',
      status: 'error',
      summary: expect.stringMatching(
        new RegExp(
          `^server ${url} \\(saved by molf up for ${projectDir} in .+\\) does not answer: connection refused$`,
        ),
      ),
      fix: `start it again: run \`molf up\` in ${projectDir}`,
    });
  });

  it('checks MOLF_SERVER_URL before a saved connection', async () => {
    const url = `ws://127.0.0.1:${await deadPort()}`;
    const check = await checkConnection({
      cwd: await tempDir(),
      env: { MOLF_CLIENT_DIR: await tempDir(), MOLF_SERVER_URL: url },
    });
    expect(check).toMatchObject({
      status: 'error',
      summary: `server ${url} (MOLF_SERVER_URL) does not answer: connection refused`,
    });
    expect(check.fix).toBe('start the server, or unset MOLF_SERVER_URL');
  });
});

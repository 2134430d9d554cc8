import { X509Certificate } from 'node:crypto';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, generateCertificate } from '@molf/server';
import { afterEach, describe, expect, it } from 'vitest';
import { saveConnection } from '../connection-store.ts';
import { knownServers } from '../remote/known-servers.ts';
import { savedLogins } from '../remote/saved-logins.ts';
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

  it('checks the default server of molf login when nothing else names one', async () => {
    const server = await createServer({
      port: 0,
      dataDir: await tempDir(),
      tokens: { client: 'molf_c_doctor_login_0001' },
    });
    cleanups.push(() => server.close());
    const clientDir = await tempDir();
    await savedLogins(clientDir).save(
      server.url,
      { token: 'molf_c_doctor_login_0001', role: 'admin', name: 'laptop', credentialId: 'x', savedAt: 'now' },
      { makeDefault: true },
    );
    const check = await checkConnection({ cwd: await tempDir(), env: { MOLF_CLIENT_DIR: clientDir } });
    expect(check).toMatchObject({ status: 'ok' });
    expect(check.summary).toContain('(the default of molf login) answers');
  });

  it('verifies a wss:// server as a client would: its pin answers, an unknown certificate is an error naming molf trust, an ending one a warning', async () => {
    const certificate = await generateCertificate({ names: ['127.0.0.1'], days: 10 });
    const server = await createServer({ port: 0, dataDir: await tempDir(), tls: certificate });
    cleanups.push(() => server.close());
    const clientDir = await tempDir();
    const env = { MOLF_CLIENT_DIR: clientDir, MOLF_SERVER_URL: server.url };

    const unknown = await checkConnection({ cwd: await tempDir(), env });
    expect(unknown).toMatchObject({ status: 'error', fix: expect.stringContaining(`molf trust ${server.url}`) });
    expect(unknown.summary).toContain('has not seen');

    const fingerprint256 = new X509Certificate(certificate.cert).fingerprint256;
    await knownServers(clientDir).set(server.url, {
      type: 'pinned',
      fingerprint256,
      cert: certificate.cert,
      pinnedAt: new Date().toISOString(),
      validTo: new Date(Date.now() + 10 * 86_400_000).toISOString(),
    });
    const pinned = await checkConnection({ cwd: await tempDir(), env });
    expect(pinned).toMatchObject({ status: 'warning', fix: 'molf server --renew-cert on the server' });
    expect(pinned.summary).toMatch(
      /answers \(server \S+, 0 of 0 workers online\); the certificate of .* expires in (9|10) days/,
    );
  });
});

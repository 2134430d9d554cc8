import { X509Certificate } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateCertificate } from '@molf/server';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { captureOutput, spawnMolf, stopSpawnedProcesses } from '../testing/cli-test-kit.ts';

const cleanups: Array<() => Promise<unknown>> = [];

afterEach(async () => {
  // The processes first: the cleanups remove directories they use.
  await stopSpawnedProcesses();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function tempDir(): Promise<string> {
  const path = await mkdtemp(join(tmpdir(), 'molf-server-tls-'));
  cleanups.push(() => rm(path, { recursive: true, force: true, maxRetries: 3 }));
  return path;
}

const envFor = (home: string) => ({ MOLF_HOME: home, MOLF_LOG_FILE: 'none', MOLF_LOG_LEVEL: 'warn' });

/** `molf server` until its start-up lines are out: the URL it prints, and all it printed. */
async function startServer(home: string, args: string[]) {
  const child = spawnMolf(['server', '--port', '0', ...args], { env: envFor(home) });
  const output = captureOutput(child);
  await output.seen('data directory:');
  const url = /listening on (\S+)/.exec(output.text())?.[1] ?? '';
  return { child, output, url, port: Number(new URL(url).port) };
}

/** `open` when a WebSocket opens, else the error's code. */
function tryOpen(url: string, ca?: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = new WebSocket(url, ca === undefined ? {} : { ca });
    socket.on('open', () => {
      socket.terminate();
      resolve('open');
    });
    socket.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
  });
}

const fingerprintIn = (text: string) => /SHA-256 ((?:[0-9A-F]{2}:){31}[0-9A-F]{2})/.exec(text)?.[1];

describe('molf server and TLS', () => {
  it('serves TLS by default on an address other machines can reach, printing the fingerprint clients show', async () => {
    const home = await tempDir();
    const { output, url, port } = await startServer(home, ['--host', '0.0.0.0']);
    expect(url).toBe(`wss://0.0.0.0:${port}`);
    const cert = await readFile(join(home, 'tls', 'cert.pem'), 'utf8');
    const fingerprint = new X509Certificate(cert).fingerprint256;
    expect(fingerprintIn(output.text())).toBe(fingerprint);
    expect(output.text()).toContain('TLS certificate (made now)');
    expect(await tryOpen(`wss://127.0.0.1:${port}`, cert)).toBe('open');
    expect(await tryOpen(`wss://127.0.0.1:${port}`)).toBe('DEPTH_ZERO_SELF_SIGNED_CERT');

    const printed = await spawnMolf(['server', '--print-fingerprint'], { env: envFor(home) });
    expect(printed.exitCode).toBe(0);
    expect(printed.stdout.split('\n')[0]).toBe(fingerprint);
  });

  it('serves plain ws:// on loopback, and has no fingerprint to print then', async () => {
    const home = await tempDir();
    const { output, url, port } = await startServer(home, []);
    expect(url).toBe(`ws://127.0.0.1:${port}`);
    expect(output.text()).not.toContain('TLS certificate');
    expect(await tryOpen(url)).toBe('open');

    const printed = await spawnMolf(['server', '--print-fingerprint'], { env: envFor(home) });
    expect(printed.exitCode).toBe(1);
    expect(printed.stderr).toContain(`no certificate in ${home} yet`);
  });

  it('serves TLS on loopback with --tls, the same certificate at the next start', async () => {
    const home = await tempDir();
    const first = await startServer(home, ['--tls']);
    expect(first.url).toBe(`wss://127.0.0.1:${first.port}`);
    first.child.kill('SIGTERM');
    await first.child;
    const second = await startServer(home, ['--tls']);
    expect(second.output.text()).not.toContain('(made now)');
    expect(fingerprintIn(second.output.text())).toBe(fingerprintIn(first.output.text()));
  });

  it('warns loudly with --no-tls on an address other machines can reach, and serves plain', async () => {
    const home = await tempDir();
    const { output, url, port } = await startServer(home, ['--host', '0.0.0.0', '--no-tls']);
    expect(url).toBe(`ws://0.0.0.0:${port}`);
    expect(output.text()).toContain('molf server: WARNING: TLS is off (--no-tls) on 0.0.0.0');
  });

  it('renews the certificate with --renew-cert, printing the new fingerprint and how clients trust it again', async () => {
    const home = await tempDir();
    const first = await startServer(home, ['--tls']);
    first.child.kill('SIGTERM');
    await first.child;
    const renewed = await startServer(home, ['--tls', '--renew-cert']);
    const fingerprint = fingerprintIn(renewed.output.text());
    expect(fingerprint).not.toBe(fingerprintIn(first.output.text()));
    expect(fingerprint).toBe(new X509Certificate(await readFile(join(home, 'tls', 'cert.pem'))).fingerprint256);
    expect(await readFile(join(home, 'tls', 'cert.pem.old'), 'utf8')).toContain('BEGIN CERTIFICATE');
    expect(renewed.output.text()).toContain(`molf trust wss://127.0.0.1:${renewed.port} --forget`);
  });

  it('serves your own certificate and key, given as flags, also on loopback', async () => {
    const home = await tempDir();
    const pair = await generateCertificate({ names: ['127.0.0.1'] });
    await writeFile(join(home, 'mine.crt'), pair.cert);
    await writeFile(join(home, 'mine.key'), pair.key, { mode: 0o600 });
    const { url, port } = await startServer(home, [
      '--tls-cert',
      join(home, 'mine.crt'),
      '--tls-key',
      join(home, 'mine.key'),
    ]);
    expect(url).toBe(`wss://127.0.0.1:${port}`);
    expect(await tryOpen(url, pair.cert)).toBe('open');
  });

  it('says on stderr when the certificate ends within 30 days, and refuses an expired one', async () => {
    const home = await tempDir();
    await mkdir(join(home, 'tls'), { mode: 0o700 });
    const writeGenerated = async (pair: { cert: string; key: string }) => {
      await writeFile(join(home, 'tls', 'key.pem'), pair.key, { mode: 0o600 });
      await writeFile(join(home, 'tls', 'cert.pem'), pair.cert, { mode: 0o600 });
    };
    await writeGenerated(await generateCertificate({ names: ['localhost', '127.0.0.1'], days: 10 }));
    const expiring = await startServer(home, ['--tls']);
    expect(expiring.output.text()).toMatch(
      /molf server: warning: .*expires on .* left\): run `molf server --renew-cert`/,
    );
    expiring.child.kill('SIGTERM');
    await expiring.child;

    await writeGenerated(
      await generateCertificate({ names: ['localhost'], days: 1, now: () => Date.parse('2025-01-01T00:00:00Z') }),
    );
    const refused = await spawnMolf(['server', '--port', '0', '--tls'], { env: envFor(home) });
    expect(refused.exitCode).toBe(1);
    expect(refused.stderr).toMatch(/expired on 2025-01-02: run `molf server --renew-cert`/);
  });

  it('refuses a --tls-san that is not a name, as a usage error', async () => {
    const home = await tempDir();
    const result = await spawnMolf(['server', '--host', '0.0.0.0', '--port', '0', '--tls-san', 'not_a name'], {
      env: envFor(home),
    });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('"not_a name" is neither an IP address nor a host name');
  });
});

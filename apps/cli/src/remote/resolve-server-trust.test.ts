import { X509Certificate } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer as createHttpServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type CertificatePair, generateCertificate } from '@molf/server';
import { describe, expect, it } from 'vitest';
import { knownServers } from './known-servers.ts';
import { resolveServerTrust } from './resolve-server-trust.ts';

async function createTempDir() {
  const path = await mkdtemp(join(tmpdir(), 'molf-trust-'));
  return { path, [Symbol.asyncDispose]: () => rm(path, { recursive: true, force: true }) };
}

async function httpsServer(pair: CertificatePair) {
  const server = createHttpsServer({ ...pair, minVersion: 'TLSv1.3' }, (_request, response) => response.end('ok'));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `wss://127.0.0.1:${port}`,
    /** Shows another certificate from now on, on the same address. */
    use(next: CertificatePair) {
      server.setSecureContext({ ...next, minVersion: 'TLSv1.3' });
    },
    async [Symbol.asyncDispose]() {
      server.closeAllConnections();
      server.close();
    },
  };
}

const fingerprintOf = async (pair: CertificatePair) => new X509Certificate(pair.cert).fingerprint256;

describe('trusting a wss:// server before anything is sent', () => {
  it('asks on first contact with the fingerprint, pins the certificate (0600) when the person says yes, and does not ask again', async () => {
    await using dir = await createTempDir();
    const pair = await generateCertificate({ names: ['127.0.0.1'] });
    await using server = await httpsServer(pair);
    const store = knownServers(dir.path);
    const questions: string[] = [];
    const trust = await resolveServerTrust({
      url: server.url,
      store,
      ask: async (question) => {
        questions.push(question);
        return true;
      },
    });
    const fingerprint = await fingerprintOf(pair);
    expect(questions).toHaveLength(1);
    expect(questions[0]).toContain(fingerprint);
    expect(questions[0]).toContain('molf server --print-fingerprint');
    expect(trust).toMatchObject({ type: 'pinned', fingerprint256: fingerprint });
    expect((await stat(store.path)).mode & 0o777).toBe(0o600);

    const again = await resolveServerTrust({
      url: `${server.url}/`,
      store,
      ask: () => Promise.reject(new Error('asked twice')),
    });
    expect(again).toMatchObject({ type: 'pinned', fingerprint256: fingerprint });
  });

  it('refuses an unknown certificate when the person says no, or when nobody can be asked, saying how to pin it', async () => {
    await using dir = await createTempDir();
    const pair = await generateCertificate({ names: ['127.0.0.1'] });
    await using server = await httpsServer(pair);
    const store = knownServers(dir.path);
    await expect(resolveServerTrust({ url: server.url, store, ask: async () => false })).rejects.toMatchObject({
      code: 'server_untrusted',
    });
    const error = await resolveServerTrust({ url: server.url, store }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'server_untrusted' });
    expect((error as Error).message).toContain(await fingerprintOf(pair));
    expect((error as Error).message).toContain('Nothing was sent');
    expect((error as Error).message).toContain(`molf trust ${server.url} --fingerprint`);
    expect(await store.list()).toEqual([]);
  });

  it('pins without asking when --fingerprint matches, in any usual spelling, and refuses one that does not', async () => {
    await using dir = await createTempDir();
    const pair = await generateCertificate({ names: ['127.0.0.1'] });
    const other = await generateCertificate({ names: ['127.0.0.1'] });
    await using server = await httpsServer(pair);
    const store = knownServers(dir.path);
    const wrong = await resolveServerTrust({ url: server.url, store, fingerprint: await fingerprintOf(other) }).catch(
      (caught: unknown) => caught,
    );
    expect(wrong).toMatchObject({ code: 'server_untrusted' });
    expect((wrong as Error).message).toMatch(/not the fingerprint you gave/);
    await expect(resolveServerTrust({ url: server.url, store, fingerprint: 'AB:CD' })).rejects.toMatchObject({
      code: 'invalid_input',
    });

    const spelled = `sha256:${(await fingerprintOf(pair)).replaceAll(':', '').toLowerCase()}`;
    expect(await resolveServerTrust({ url: server.url, store, fingerprint: spelled })).toMatchObject({
      type: 'pinned',
      fingerprint256: await fingerprintOf(pair),
    });
  });

  it('holds the server to a given --fingerprint also when a pin or a CA file vouches for it, and checks its spelling first', async () => {
    await using dir = await createTempDir();
    const pair = await generateCertificate({ names: ['127.0.0.1'] });
    const other = await generateCertificate({ names: ['127.0.0.1'] });
    await using server = await httpsServer(pair);
    const caFile = join(dir.path, 'ca.pem');
    await writeFile(caFile, pair.cert);
    const pinned = knownServers(join(dir.path, 'pinned'));
    await resolveServerTrust({ url: server.url, store: pinned, ask: async () => true });
    const withCa = knownServers(join(dir.path, 'with-ca'));
    const wrong = await fingerprintOf(other);

    for (const request of [{ store: pinned }, { store: withCa, caFile }]) {
      const refused = await resolveServerTrust({ url: server.url, ...request, fingerprint: wrong }).catch(
        (caught: unknown) => caught,
      );
      expect(refused).toMatchObject({ code: 'server_untrusted' });
      expect((refused as Error).message).toContain(
        `SHA-256 ${await fingerprintOf(pair)}, not the fingerprint you gave (${wrong})`,
      );
      await expect(resolveServerTrust({ url: server.url, ...request, fingerprint: 'AB:CD' })).rejects.toMatchObject({
        code: 'invalid_input',
        message: expect.stringContaining('--fingerprint AB:CD is not a SHA-256 fingerprint'),
      });
      expect(
        await resolveServerTrust({ url: server.url, ...request, fingerprint: await fingerprintOf(pair) }),
      ).toMatchObject({ type: request.caFile === undefined ? 'pinned' : 'ca' });
    }
    // The CA file was not remembered by the refused attempts.
    expect(await withCa.list()).toEqual([]);
  });

  it('refuses a changed certificate at a pinned address, showing both fingerprints and how to re-pin', async () => {
    await using dir = await createTempDir();
    const pair = await generateCertificate({ names: ['127.0.0.1'] });
    await using server = await httpsServer(pair);
    const store = knownServers(dir.path);
    await resolveServerTrust({ url: server.url, store, ask: async () => true });

    const renewed = await generateCertificate({ names: ['127.0.0.1'] });
    server.use(renewed);
    const error = await resolveServerTrust({ url: server.url, store, ask: async () => true }).catch(
      (caught: unknown) => caught,
    );
    expect(error).toMatchObject({ code: 'server_untrusted' });
    const message = (error as Error).message;
    expect(message).toContain(`pinned: SHA-256 ${await fingerprintOf(pair)}`);
    expect(message).toContain(`shown:  SHA-256 ${await fingerprintOf(renewed)}`);
    expect(message).toContain(`molf trust ${server.url} --fingerprint ${await fingerprintOf(renewed)}`);
    // The pin is kept: only the person replaces it.
    expect(await store.get(server.url)).toMatchObject({ fingerprint256: await fingerprintOf(pair) });
  });

  it('uses a CA file with the host name checked, and remembers it for the URL when asked to', async () => {
    await using dir = await createTempDir();
    const pair = await generateCertificate({ names: ['127.0.0.1'] });
    await using server = await httpsServer(pair);
    const caFile = join(dir.path, 'ca.pem');
    await writeFile(caFile, pair.cert);
    const store = knownServers(dir.path);
    expect(await resolveServerTrust({ url: server.url, store, caFile, rememberCa: true })).toEqual({
      type: 'ca',
      ca: pair.cert,
    });
    expect(await resolveServerTrust({ url: server.url, store })).toEqual({ type: 'ca', ca: pair.cert });

    await writeFile(join(dir.path, 'not-pem'), 'hello');
    await expect(resolveServerTrust({ url: server.url, caFile: join(dir.path, 'not-pem'), store })).rejects.toThrow(
      /holds no PEM certificate/,
    );
  });

  it('refuses a CA file that does not vouch for the server, before anything is sent, and keeps the pin it would replace', async () => {
    await using dir = await createTempDir();
    const pair = await generateCertificate({ names: ['127.0.0.1'] });
    const other = await generateCertificate({ names: ['127.0.0.1'] });
    const forLocalhost = await generateCertificate({ names: ['localhost'] });
    await using server = await httpsServer(pair);
    const store = knownServers(dir.path);
    await resolveServerTrust({ url: server.url, store, ask: async () => true });
    const pin = await store.get(server.url);

    const otherCa = join(dir.path, 'other-ca.pem');
    await writeFile(otherCa, other.cert);
    const unsigned = await resolveServerTrust({ url: server.url, store, caFile: otherCa, rememberCa: true }).catch(
      (caught: unknown) => caught,
    );
    expect(unsigned).toMatchObject({ code: 'server_untrusted' });
    expect((unsigned as Error).message).toContain(`the CA file ${otherCa} does not vouch for`);
    expect((unsigned as Error).message).toContain('Nothing was sent');
    expect(await store.get(server.url)).toEqual(pin);

    // Signed by the CA, but for another host name than the URL's.
    server.use(forLocalhost);
    const localhostCa = join(dir.path, 'localhost-ca.pem');
    await writeFile(localhostCa, forLocalhost.cert);
    const wrongName = await resolveServerTrust({ url: server.url, store, caFile: localhostCa, rememberCa: true }).catch(
      (caught: unknown) => caught,
    );
    expect(wrongName).toMatchObject({ code: 'server_untrusted' });
    expect((wrongName as Error).message).toMatch(/its certificate is not for 127\.0\.0\.1 \(it names DNS:localhost\)/);
    expect(await store.get(server.url)).toEqual(pin);
  });

  it('warns when the pinned certificate expires within 30 days', async () => {
    await using dir = await createTempDir();
    const pair = await generateCertificate({ names: ['127.0.0.1'], days: 10 });
    await using server = await httpsServer(pair);
    const told: string[] = [];
    await resolveServerTrust({
      url: server.url,
      store: knownServers(dir.path),
      ask: async () => true,
      tell: (line) => told.push(line),
    });
    expect(told.some((line) => /expires in (9|10) days/.test(line) && line.includes('--renew-cert'))).toBe(true);
  });

  it('does not offer to pin a certificate that has expired or is not valid yet: it could never be used', async () => {
    await using dir = await createTempDir();
    const expired = await generateCertificate({
      names: ['127.0.0.1'],
      days: 1,
      now: () => Date.now() - 3 * 86_400_000,
    });
    const future = await generateCertificate({ names: ['127.0.0.1'], now: () => Date.now() + 3 * 86_400_000 });
    await using server = await httpsServer(expired);
    const store = knownServers(dir.path);
    const questions: string[] = [];
    const ask = async (question: string) => {
      questions.push(question);
      return true;
    };
    const refused = await resolveServerTrust({ url: server.url, store, ask }).catch((caught: unknown) => caught);
    expect(refused).toMatchObject({ code: 'server_untrusted' });
    expect((refused as Error).message).toMatch(/expired on \d{4}-\d{2}-\d{2}.*molf server --renew-cert/);
    const withFingerprint = await resolveServerTrust({
      url: server.url,
      store,
      fingerprint: await fingerprintOf(expired),
    }).catch((caught: unknown) => caught);
    expect(withFingerprint).toMatchObject({ code: 'server_untrusted' });

    server.use(future);
    const early = await resolveServerTrust({ url: server.url, store, ask }).catch((caught: unknown) => caught);
    expect(early).toMatchObject({ code: 'server_untrusted' });
    expect((early as Error).message).toMatch(/valid only from .*clock/);
    expect(questions).toEqual([]);
    expect(await store.list()).toEqual([]);
  });

  it('says to use ws:// when a wss:// URL reaches a plain server, and needs no trust for ws://', async () => {
    await using dir = await createTempDir();
    const plain = createHttpServer((_request, response) => response.end('plain'));
    plain.listen(0, '127.0.0.1');
    await once(plain, 'listening');
    try {
      const { port } = plain.address() as AddressInfo;
      const store = knownServers(dir.path);
      await expect(resolveServerTrust({ url: `wss://127.0.0.1:${port}`, store })).rejects.toThrow(
        `does not speak TLS (it answered a TLS hello with something else): if it is a plain server on loopback or a trusted network, use ws://127.0.0.1:${port}`,
      );
      expect(await resolveServerTrust({ url: `ws://127.0.0.1:${port}`, store })).toBeUndefined();
    } finally {
      plain.close();
    }
  });

  it('refuses a damaged pin file instead of reading it as empty (which would take the next certificate without a word)', async () => {
    await using dir = await createTempDir();
    const pair = await generateCertificate({ names: ['127.0.0.1'] });
    await using server = await httpsServer(pair);
    const store = knownServers(dir.path);
    await writeFile(store.path, '{"version": 1, "servers": {"wss://x:1": {"type": "pinned"}}}');
    await expect(resolveServerTrust({ url: server.url, store, ask: async () => true })).rejects.toThrow(
      /known-servers\.json is damaged/,
    );
  });

  it('refuses a pin whose certificate is not the one its fingerprint names, or no certificate, as a damaged pin file', async () => {
    await using dir = await createTempDir();
    const pair = await generateCertificate({ names: ['127.0.0.1'] });
    const other = await generateCertificate({ names: ['127.0.0.1'] });
    await using server = await httpsServer(pair);
    const store = knownServers(dir.path);
    await resolveServerTrust({ url: server.url, store, ask: async () => true });
    const file = JSON.parse(await readFile(store.path, 'utf8')) as { servers: Record<string, { cert: string }> };
    const [key] = Object.keys(file.servers);
    const entry = file.servers[key ?? ''];
    if (key === undefined || entry === undefined) throw new Error('nothing pinned');

    for (const cert of [other.cert, 'not a certificate']) {
      entry.cert = cert;
      await writeFile(store.path, JSON.stringify(file));
      const error = await resolveServerTrust({ url: server.url, store, ask: async () => true }).catch(
        (caught: unknown) => caught,
      );
      expect(error).toMatchObject({ code: 'config_invalid' });
      expect((error as Error).message).toContain(`${store.path} is damaged`);
      expect((error as Error).message).toContain(key);
    }
  });
});

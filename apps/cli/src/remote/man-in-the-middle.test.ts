import { X509Certificate } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { redeemPairingCode } from '@molf/client/node';
import { type CertificatePair, createServer, generateCertificate, type MolfServer } from '@molf/server';
import { startTlsInterceptor, type TlsInterceptor } from '@molf/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { connectClient } from '../connect-client.ts';
import { knownServers } from './known-servers.ts';
import { resolveServerTrust } from './resolve-server-trust.ts';

const CLIENT_TOKEN = 'molf_c_mitm-test-client-token-0123456789';
const WORKER_TOKEN = 'molf_w_mitm-test-worker-token-0123456789';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function tempDir(): Promise<string> {
  const path = await mkdtemp(join(tmpdir(), 'molf-mitm-'));
  cleanups.push(() => rm(path, { recursive: true, force: true }));
  return path;
}

/** A real Molf server over TLS, and an interceptor in front of it that starts as a plain relay. */
async function tlsServerBehindInterceptor(): Promise<{
  server: MolfServer;
  certificate: CertificatePair;
  interceptor: TlsInterceptor;
  /** Another certificate for the same names: what a man in the middle shows. */
  forged: CertificatePair;
}> {
  const certificate = await generateCertificate({ names: ['127.0.0.1', 'localhost'] });
  const forged = await generateCertificate({ names: ['127.0.0.1', 'localhost'] });
  const server = await createServer({
    port: 0,
    dataDir: await tempDir(),
    tokens: { client: CLIENT_TOKEN, worker: WORKER_TOKEN },
    tls: certificate,
  });
  cleanups.push(() => server.close());
  const interceptor = await startTlsInterceptor({
    target: { host: '127.0.0.1', port: server.port, ca: certificate.cert },
  });
  cleanups.push(() => interceptor.close());
  return { server, certificate, interceptor, forged };
}

const fingerprintOf = (pair: CertificatePair) => new X509Certificate(pair.cert).fingerprint256;

describe('a man in the middle with another certificate', () => {
  it('gets nothing from a client that pinned the real server: it is refused before the token leaves', async () => {
    const { interceptor, forged } = await tlsServerBehindInterceptor();
    const store = knownServers(await tempDir());

    // First contact through the honest relay: the person checks the fingerprint and says yes.
    const trust = await resolveServerTrust({ url: interceptor.url, store, ask: async () => true });
    const honest = await connectClient({ url: interceptor.url, token: CLIENT_TOKEN, trust });
    expect((await honest.rpc.auth.whoami.query()).role).toBe('admin');
    await honest.close();

    interceptor.intercept(forged);
    const refused = await resolveServerTrust({ url: interceptor.url, store, ask: async () => true }).catch(
      (error: unknown) => error,
    );
    expect(refused).toMatchObject({ code: 'server_untrusted' });
    expect((refused as Error).message).toContain(fingerprintOf(forged));

    // Even with the trust decided before the certificate changed, every handshake checks the pin.
    await expect(
      connectClient({
        url: interceptor.url,
        token: CLIENT_TOKEN,
        trust: trust ?? { type: 'system' },
        timeoutMs: 1_500,
      }),
    ).rejects.toThrow();
    await expect(
      redeemPairingCode({
        url: interceptor.url,
        code: 'ABCD-EFGH',
        kind: 'client',
        name: 'laptop',
        ...(trust === undefined ? {} : { trust }),
      }),
    ).rejects.toThrow();
    expect(interceptor.interceptedHandshakes()).toBe(0);
    expect(interceptor.received().length).toBe(0);
  });

  it('would read the token from a client that took its certificate (the proof that the test above can fail)', async () => {
    const { interceptor, forged } = await tlsServerBehindInterceptor();
    interceptor.intercept(forged);
    const fooled = await connectClient({
      url: interceptor.url,
      token: CLIENT_TOKEN,
      trust: { type: 'ca', ca: forged.cert },
    });
    expect((await fooled.rpc.auth.whoami.query()).role).toBe('admin');
    await fooled.close();
    expect(interceptor.receivedText()).toContain(CLIENT_TOKEN);
  });

  it('is refused at first contact when the person gave the real fingerprint', async () => {
    const { interceptor, forged, certificate } = await tlsServerBehindInterceptor();
    interceptor.intercept(forged);
    const store = knownServers(await tempDir());
    const refused = await resolveServerTrust({
      url: interceptor.url,
      store,
      fingerprint: fingerprintOf(certificate),
      ask: async () => true,
    }).catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: 'server_untrusted' });
    expect((refused as Error).message).toMatch(/not the fingerprint you gave/);
    expect(await store.list()).toEqual([]);
    expect(interceptor.received().length).toBe(0);
  });
});

describe('verifying a TLS server', () => {
  it('trusts a CA file with the host name checked, and refuses a CA that did not sign the certificate', async () => {
    const { server, certificate, forged } = await tlsServerBehindInterceptor();
    const dir = await tempDir();
    await writeFile(join(dir, 'ca.pem'), certificate.cert);
    await writeFile(join(dir, 'other-ca.pem'), forged.cert);
    const store = knownServers(dir);

    const trust = await resolveServerTrust({ url: server.url, store, caFile: join(dir, 'ca.pem') });
    const client = await connectClient({
      url: server.url,
      token: CLIENT_TOKEN,
      ...(trust === undefined ? {} : { trust }),
    });
    expect((await client.rpc.auth.whoami.query()).role).toBe('admin');
    await client.close();

    await expect(
      resolveServerTrust({ url: server.url, store, caFile: join(dir, 'other-ca.pem') }),
    ).rejects.toMatchObject({ code: 'server_untrusted', message: expect.stringContaining('does not vouch for') });
    // And every handshake checks it again: the other CA's trust, given straight to a client.
    await expect(
      connectClient({
        url: server.url,
        token: CLIENT_TOKEN,
        trust: { type: 'ca', ca: forged.cert },
        timeoutMs: 60_000,
      }),
    ).rejects.toMatchObject({ code: 'server_untrusted' });
  });

  it("says why the handshake refused the server, and that nothing was sent, instead of 'cannot reach it'", async () => {
    // A CA file that signed the certificate, which names another host than the URL's.
    const forLocalhost = await generateCertificate({ names: ['localhost'] });
    const named = await createServer({
      port: 0,
      dataDir: await tempDir(),
      tokens: { client: CLIENT_TOKEN },
      tls: forLocalhost,
    });
    cleanups.push(() => named.close());
    const wrongName = await connectClient({
      url: named.url,
      token: CLIENT_TOKEN,
      trust: { type: 'ca', ca: forLocalhost.cert },
      timeoutMs: 60_000,
    }).catch((caught: unknown) => caught);
    expect(wrongName).toMatchObject({ code: 'server_untrusted' });
    expect((wrongName as Error).message).toMatch(/certificate is not for 127\.0\.0\.1/);
    expect((wrongName as Error).message).toContain('(nothing was sent)');
    // The pairing request is refused in the same handshake, and says so the same way.
    const pairing = await redeemPairingCode({
      url: named.url,
      code: 'ABCD-EFGH',
      kind: 'client',
      name: 'laptop',
      trust: { type: 'ca', ca: forLocalhost.cert },
    }).catch((caught: unknown) => caught);
    expect(pairing).toMatchObject({ code: 'server_untrusted' });
    expect((pairing as Error).message).toMatch(
      /refused in the TLS handshake \(nothing was sent\): its certificate is not for 127\.0\.0\.1/,
    );

    // An expired certificate, pinned when it was still good: the handshake refuses it.
    const expired = await generateCertificate({
      names: ['127.0.0.1'],
      days: 1,
      now: () => Date.now() - 3 * 86_400_000,
    });
    const old = await createServer({
      port: 0,
      dataDir: await tempDir(),
      tokens: { client: CLIENT_TOKEN },
      tls: expired,
    });
    cleanups.push(() => old.close());
    const outdated = await connectClient({
      url: old.url,
      token: CLIENT_TOKEN,
      trust: { type: 'pinned', fingerprint256: fingerprintOf(expired), cert: expired.cert },
      timeoutMs: 60_000,
    }).catch((caught: unknown) => caught);
    expect(outdated).toMatchObject({ code: 'server_untrusted' });
    expect((outdated as Error).message).toMatch(/certificate has expired/);
    expect((outdated as Error).message).toContain('molf server --renew-cert');
  });

  it('says to use wss:// when a ws:// URL reaches a TLS server', async () => {
    const { server } = await tlsServerBehindInterceptor();
    const plainUrl = server.url.replace('wss://', 'ws://');
    const error = await connectClient({ url: plainUrl, token: CLIENT_TOKEN, timeoutMs: 1_500, failFast: true }).catch(
      (caught: unknown) => caught,
    );
    expect((error as Error).message).toBe(
      `the server at ${plainUrl} speaks TLS: connect to ${server.url} instead (its certificate is verified first)`,
    );
  });

  it('says to use ws:// when a wss:// URL reaches a plain server, before sending anything', async () => {
    const server = await createServer({ port: 0, dataDir: await tempDir(), tokens: { client: CLIENT_TOKEN } });
    cleanups.push(() => server.close());
    const secureUrl = server.url.replace('ws://', 'wss://');
    await expect(resolveServerTrust({ url: secureUrl, store: knownServers(await tempDir()) })).rejects.toThrow(
      `does not speak TLS (it answered a TLS hello with something else): if it is a plain server on loopback or a trusted network, use ${server.url}`,
    );
  });
});

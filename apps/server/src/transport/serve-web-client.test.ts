import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { createTempDir, startTestServer } from '../testing/test-link.ts';
import { WEB_CLIENT_CSP } from './serve-web-client.ts';

const SCRIPT = `console.log(${JSON.stringify('x'.repeat(2_000))});`;

/** A built page as scripts/build-web.ts leaves it: hashed assets with precompressed copies. */
async function builtPage(): Promise<{ root: string; [Symbol.asyncDispose](): Promise<void> }> {
  const dir = await createTempDir('molf-web-root-');
  await mkdir(join(dir.path, 'assets'));
  await writeFile(
    join(dir.path, 'index.html'),
    '<!doctype html><script type="module" src="/assets/app-1a2b3c.js"></script>',
  );
  await writeFile(join(dir.path, 'assets', 'app-1a2b3c.js'), SCRIPT);
  await writeFile(join(dir.path, 'assets', 'app-1a2b3c.js.br'), brotliCompressSync(SCRIPT));
  await writeFile(join(dir.path, 'assets', 'app-1a2b3c.js.gz'), gzipSync(SCRIPT));
  return { root: dir.path, [Symbol.asyncDispose]: async () => dir[Symbol.asyncDispose]() };
}

describe('the web client served by the server', () => {
  it('serves the page revalidated and its hashed assets for good, with its security headers', async () => {
    await using page = await builtPage();
    await using data = await createTempDir('molf-web-data-');
    await using server = await startTestServer({ dataDir: data.path, webRoot: page.root });

    const index = await fetch(`${server.httpUrl}/`);
    expect(index.status).toBe(200);
    expect(index.headers.get('cache-control')).toBe('no-cache');
    expect(index.headers.get('content-security-policy')).toBe(WEB_CLIENT_CSP);
    expect(index.headers.get('referrer-policy')).toBe('no-referrer');
    expect(index.headers.get('x-content-type-options')).toBe('nosniff');
    const etag = index.headers.get('etag') ?? '';
    expect(etag).not.toBe('');
    await index.text();
    expect((await fetch(`${server.httpUrl}/`, { headers: { 'if-none-match': etag } })).status).toBe(304);

    const asset = await fetch(`${server.httpUrl}/assets/app-1a2b3c.js`, { headers: { 'accept-encoding': 'br' } });
    expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(asset.headers.get('content-encoding')).toBe('br');
    expect(await asset.text()).toBe(SCRIPT);
  });

  it('answers the page’s own paths with the page, a missing asset with 404, and only GET and HEAD', async () => {
    await using page = await builtPage();
    await using data = await createTempDir('molf-web-data-');
    await using server = await startTestServer({ dataDir: data.path, webRoot: page.root });

    const deepLink = await fetch(`${server.httpUrl}/s/some-session`);
    expect(deepLink.status).toBe(200);
    expect(await deepLink.text()).toContain('app-1a2b3c.js');
    expect((await fetch(`${server.httpUrl}/assets/gone-000000.js`)).status).toBe(404);
    expect((await fetch(`${server.httpUrl}/`, { method: 'POST', body: 'x' })).status).toBe(405);
    expect((await fetch(`${server.httpUrl}/healthz`)).headers.get('content-type')).toBe('application/json');
  });

  it('serves no page, only its health, when the web client is not built', async () => {
    await using data = await createTempDir('molf-web-data-');
    await using empty = await createTempDir('molf-web-empty-');
    await using server = await startTestServer({ dataDir: data.path, webRoot: empty.path });
    expect((await fetch(`${server.httpUrl}/`)).status).toBe(404);
    expect((await fetch(`${server.httpUrl}/healthz`)).status).toBe(200);
  });
});

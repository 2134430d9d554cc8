import { once } from 'node:events';
import { writeFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest, type RequestOptions } from 'node:https';
import { connect as connectTcp } from 'node:net';
import { join } from 'node:path';
import { connect as connectTls } from 'node:tls';
import { describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { createTempDir, startTestServer, TEST_WORKER_TOKEN } from '../testing/test-link.ts';
import { generateCertificate } from '../tls/generate-certificate.ts';
import { PLAIN_HTTP_ON_TLS_ANSWER } from './answer-plain-http-on-tls.ts';

/** A server on port 0 with a fresh certificate for 127.0.0.1 and localhost, removed on dispose. */
async function startTlsServer(options: { webRoot?: string; tlsHandshakeTimeoutMs?: number } = {}) {
  const data = await createTempDir();
  const pair = await generateCertificate({ names: ['localhost', '127.0.0.1'] });
  const server = await startTestServer({ dataDir: data.path, tls: pair, ...options });
  return {
    server,
    ca: pair.cert,
    async [Symbol.asyncDispose]() {
      try {
        await server.close();
      } finally {
        await data[Symbol.asyncDispose]();
      }
    },
  };
}

/** A GET over http or https; resolves with the status and the body. */
function get(url: string, options: RequestOptions = {}): Promise<{ status: number; body: string }> {
  const request = (url.startsWith('https:') ? httpsRequest : httpRequest)(url, options);
  request.end();
  return once(request, 'response').then(async ([response]) => {
    let body = '';
    for await (const chunk of response) body += String(chunk);
    return { status: response.statusCode as number, body };
  });
}

/** Opens a WebSocket; `open` with the socket, or what refused it (an HTTP status, an error code). */
function openWebSocket(
  url: string,
  options: { ca?: string; origin?: string } = {},
): Promise<
  | { type: 'open'; socket: WebSocket }
  | { type: 'status'; status: number; body: string }
  | { type: 'error'; code: string }
> {
  return new Promise((resolve) => {
    const socket = new WebSocket(`${url}/?connectionParams=1`, {
      ...(options.ca === undefined ? {} : { ca: options.ca }),
      ...(options.origin === undefined ? {} : { origin: options.origin }),
    });
    socket.on('open', () => resolve({ type: 'open', socket }));
    socket.on('unexpected-response', (_request, response) => {
      let body = '';
      response.on('data', (chunk: Buffer) => {
        body += String(chunk);
      });
      response.on('end', () => {
        resolve({ type: 'status', status: response.statusCode ?? 0, body });
        socket.terminate();
      });
    });
    socket.on('error', (error: NodeJS.ErrnoException) => resolve({ type: 'error', code: error.code ?? error.message }));
  });
}

/** `auth.whoami` over an open socket, after the tRPC connection params as the client sends them. */
async function whoami(socket: WebSocket, token: string): Promise<unknown> {
  const answered = new Promise<unknown>((resolve) =>
    socket.on('message', (data: Buffer) => {
      const message = JSON.parse(String(data)) as { id?: number };
      if (message.id === 1) resolve(message);
    }),
  );
  socket.send(JSON.stringify({ method: 'connectionParams', data: { token } }));
  socket.send(JSON.stringify({ id: 1, method: 'query', params: { path: 'auth.whoami' } }));
  return answered;
}

describe('the server over TLS', () => {
  it('serves wss:// and https:// that a client trusting its certificate uses: a tRPC call, /healthz', async () => {
    await using tls = await startTlsServer();
    const { server, ca } = tls;
    expect(server.url).toBe(`wss://127.0.0.1:${server.port}`);
    expect(server.httpUrl).toBe(`https://127.0.0.1:${server.port}`);

    const opened = await openWebSocket(server.url, { ca });
    if (opened.type !== 'open') throw new Error(`not open: ${JSON.stringify(opened)}`);
    try {
      expect(await whoami(opened.socket, TEST_WORKER_TOKEN)).toMatchObject({
        id: 1,
        result: { data: { role: 'worker' } },
      });
    } finally {
      opened.socket.terminate();
    }
    expect(await get(`${server.httpUrl}/healthz`, { ca })).toMatchObject({ status: 200 });
  });

  it('is refused, in the handshake, by a client that does not trust its certificate', async () => {
    await using tls = await startTlsServer();
    expect(await openWebSocket(tls.server.url)).toEqual({ type: 'error', code: 'DEPTH_ZERO_SELF_SIGNED_CERT' });
  });

  it('refuses TLS 1.2', async () => {
    await using tls = await startTlsServer();
    const socket = connectTls({
      host: '127.0.0.1',
      port: tls.server.port,
      ca: tls.ca,
      servername: 'localhost',
      maxVersion: 'TLSv1.2',
    });
    const [error] = (await once(socket, 'error')) as [NodeJS.ErrnoException];
    expect(error.code).toBe('ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION');
  });

  it('answers a plain http:// request and a ws:// connection with a 400 saying to use https:// or wss://', async () => {
    await using tls = await startTlsServer();
    const { port } = tls.server;
    expect(await get(`http://127.0.0.1:${port}/healthz`)).toEqual({
      status: 400,
      body: `${PLAIN_HTTP_ON_TLS_ANSWER}\n`,
    });
    expect(await openWebSocket(`ws://127.0.0.1:${port}`)).toEqual({
      type: 'status',
      status: 400,
      body: `${PLAIN_HTTP_ON_TLS_ANSWER}\n`,
    });
    // And still serves TLS afterwards.
    expect(await get(`${tls.server.httpUrl}/healthz`, { ca: tls.ca })).toMatchObject({ status: 200 });
  });

  it('lets in a browser page from its own https:// origin, and refuses other origins', async () => {
    await using tls = await startTlsServer();
    const { server, ca } = tls;
    const own = await openWebSocket(server.url, { ca, origin: `https://127.0.0.1:${server.port}` });
    expect(own.type).toBe('open');
    if (own.type === 'open') own.socket.terminate();
    expect(await openWebSocket(server.url, { ca, origin: 'https://evil.example' })).toMatchObject({
      type: 'status',
      status: 403,
    });
  });

  it('serves the web client over https://', async () => {
    await using page = await createTempDir('molf-web-root-');
    await writeFile(join(page.path, 'index.html'), '<!doctype html><title>molf</title>');
    await using tls = await startTlsServer({ webRoot: page.path });
    expect(await get(`${tls.server.httpUrl}/`, { ca: tls.ca })).toEqual({
      status: 200,
      body: '<!doctype html><title>molf</title>',
    });
  });

  it("cuts a connection whose TLS handshake does not finish in time, long before Node's own 120 s", async () => {
    await using tls = await startTlsServer({ tlsHandshakeTimeoutMs: 200 });
    const stalled = connectTcp({ host: '127.0.0.1', port: tls.server.port });
    stalled.on('error', () => {});
    await once(stalled, 'connect');
    // The first bytes of a ClientHello: the server hands the socket to TLS, which waits for the rest.
    stalled.write(Buffer.from([0x16, 0x03, 0x01, 0x00, 0xc4, 0x01]));
    // Generous for a loaded machine, and still well under the 120 s a stalled handshake held a socket before.
    let timer: NodeJS.Timeout | undefined;
    const outcome = await Promise.race([
      once(stalled, 'close').then(() => 'closed'),
      new Promise((resolve) => {
        timer = setTimeout(resolve, 60_000, 'still open');
      }),
    ]);
    clearTimeout(timer);
    stalled.destroy();
    expect(outcome).toBe('closed');
  });

  it('closes, cutting a connection that never sent a byte', async () => {
    await using tls = await startTlsServer();
    const idle = connectTcp({ host: '127.0.0.1', port: tls.server.port });
    await once(idle, 'connect');
    const closed = once(idle, 'close');
    await tls.server.close();
    await closed;
  });
});

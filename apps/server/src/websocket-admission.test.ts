import { execFile } from 'node:child_process';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createMolfClient } from '@molf/client/node';
import { createLogger } from '@molf/logging';
import { MAX_PROMPT_CHARS } from '@molf/protocol';
import { describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { createIpv6Namespace, whyNoIpv6Namespace } from './testing/ipv6-namespace.ts';
import { clientTextFrame, closeCode, openRawWebSocket, type ServerFrame } from './testing/raw-websocket.ts';
import { createTempDir, startTestLink, startTestServer, TEST_CLIENT_TOKEN } from './testing/test-link.ts';

const execFileAsync = promisify(execFile);

/** Opens a WebSocket with `ws` and says how it went: `open`, or the HTTP status that refused it. */
function tryOpen(url: string, options: { origin?: string; headers?: Record<string, string> } = {}) {
  return new Promise<'open' | number>((resolve, reject) => {
    const socket = new WebSocket(`${url}?connectionParams=1`, {
      ...(options.origin === undefined ? {} : { origin: options.origin }),
      ...(options.headers === undefined ? {} : { headers: options.headers }),
    });
    socket.on('open', () => {
      socket.terminate();
      resolve('open');
    });
    socket.on('unexpected-response', (_request, response) => {
      resolve(response.statusCode ?? 0);
      socket.terminate();
    });
    socket.on('error', reject);
  });
}

async function memoryLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk, _encoding, callback) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      callback();
    },
  });
  return { lines, logger: await createLogger({ name: 'server', level: 'info', destination }) };
}

const connectionParams = (token: string) =>
  clientTextFrame(JSON.stringify({ method: 'connectionParams', data: { token } }));
const whoamiWithPadding = (bytes: number) =>
  clientTextFrame(
    JSON.stringify({ id: 1, method: 'query', params: { path: 'auth.whoami', input: 'x'.repeat(bytes) } }),
  );

/** Frames until a close frame or a reply to id 1. */
async function firstAnswer(raw: { nextFrame(): Promise<ServerFrame> }): Promise<ServerFrame> {
  for (;;) {
    const frame = await raw.nextFrame();
    if (frame.opcode === 0x8 || frame.payload.toString().startsWith('{"id":1')) return frame;
  }
}

describe('browser origins', () => {
  it('accepts a browser connection from its own origin, with the loopback names as equivalents', async () => {
    await using data = await createTempDir();
    await using server = await startTestServer({ dataDir: data.path });
    for (const origin of [
      `http://127.0.0.1:${server.port}`,
      `http://localhost:${server.port}`,
      `http://[::1]:${server.port}`,
      `https://localhost:${server.port}`,
    ]) {
      expect(await tryOpen(server.url, { origin }), origin).toBe('open');
    }
  });

  it('refuses any other origin with 403 before the upgrade, and logs it', async () => {
    await using data = await createTempDir();
    const { lines, logger } = await memoryLogger();
    await using server = await startTestServer({ dataDir: data.path, logger });
    for (const origin of [
      'http://evil.example',
      `http://evil.example:${server.port}`,
      `http://127.0.0.1:${server.port + 1}`,
      `ftp://127.0.0.1:${server.port}`,
      'null',
    ]) {
      expect(await tryOpen(server.url, { origin }), origin).toBe(403);
    }
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: 40,
        origin: 'http://evil.example',
        msg: 'websocket refused: origin not allowed',
      }),
    );
  });

  it('does not take the Host header as its own origin (DNS rebinding)', async () => {
    await using data = await createTempDir();
    await using server = await startTestServer({ dataDir: data.path });
    const rebound = `evil.example:${server.port}`;
    expect(await tryOpen(server.url, { origin: `http://${rebound}`, headers: { Host: rebound } })).toBe(403);
  });

  it('accepts the configured origins, exactly', async () => {
    await using data = await createTempDir();
    await using server = await startTestServer({
      dataDir: data.path,
      allowedOrigins: ['https://app.example', 'http://dev.example:3000'],
    });
    expect(await tryOpen(server.url, { origin: 'https://app.example' })).toBe('open');
    expect(await tryOpen(server.url, { origin: 'https://APP.example:443' })).toBe('open');
    expect(await tryOpen(server.url, { origin: 'http://dev.example:3000' })).toBe('open');
    expect(await tryOpen(server.url, { origin: 'http://app.example' })).toBe(403);
    expect(await tryOpen(server.url, { origin: 'http://dev.example:3001' })).toBe(403);
  });

  it('refuses to start with a configured origin that is not scheme://host[:port]', async () => {
    await using data = await createTempDir();
    await expect(
      startTestServer({ dataDir: data.path, allowedOrigins: ['https://app.example/path'] }),
    ).rejects.toMatchObject({ code: 'config_invalid', message: expect.stringContaining('https://app.example/path') });
  });

  it('lets connections without an Origin header through: the CLI and workers send none', async () => {
    await using data = await createTempDir();
    await using server = await startTestServer({ dataDir: data.path, allowedOrigins: ['https://app.example'] });
    expect(await tryOpen(server.url)).toBe('open');
    await using client = createMolfClient({ url: server.url, token: TEST_CLIENT_TOKEN });
    expect(await client.ready()).toMatchObject({ role: 'admin' });
  });
});

describe('message size before authentication', () => {
  it('closes an unauthenticated socket that sends a 1 MiB message with 1009, and logs it', async () => {
    await using data = await createTempDir();
    const { lines, logger } = await memoryLogger();
    await using server = await startTestServer({ dataDir: data.path, logger });
    await using raw = await openRawWebSocket(server.httpUrl);
    raw.write(whoamiWithPadding(1024 * 1024));
    expect(closeCode(await firstAnswer(raw))).toBe(1009);
    // Once, as a warning: a peer's bad frame is not a server failure.
    expect(lines.filter((line) => (line.level as number) >= 50)).toEqual([]);
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: 40,
        limitBytes: 64 * 1024,
        msg: 'closing a connection that sent too large a message before authenticating',
      }),
    );
  });

  it('decides on the frame header, without waiting for a payload it would have to buffer', async () => {
    await using data = await createTempDir();
    await using server = await startTestServer({ dataDir: data.path });
    await using raw = await openRawWebSocket(server.httpUrl);
    // Announces 100 MiB and sends 1 KiB of it: only a check of the header can answer now.
    raw.write(clientTextFrame('x'.repeat(1024), { announcedLength: 100 * 1024 * 1024 }));
    expect(closeCode(await firstAnswer(raw))).toBe(1009);
  });

  it('keeps the small limit for a socket whose token is refused', async () => {
    await using data = await createTempDir();
    await using server = await startTestServer({ dataDir: data.path });
    await using raw = await openRawWebSocket(server.httpUrl);
    raw.write(Buffer.concat([connectionParams('molf_c_not-a-token-of-this-server'), whoamiWithPadding(1024 * 1024)]));
    expect(closeCode(await firstAnswer(raw))).toBe(1009);
  });

  it('serves a large message once authenticated, even one sent in the same write as the credentials', async () => {
    await using data = await createTempDir();
    await using server = await startTestServer({ dataDir: data.path });
    await using raw = await openRawWebSocket(server.httpUrl);
    // A reconnecting client sends its queued calls right behind its connection params.
    raw.write(Buffer.concat([connectionParams(TEST_CLIENT_TOKEN), whoamiWithPadding(4 * 1024 * 1024)]));
    const answer = await firstAnswer(raw);
    expect(JSON.parse(answer.payload.toString())).toMatchObject({ id: 1, result: { data: { role: 'admin' } } });
  });

  it('lets an authenticated client send a prompt of the largest size allowed', async () => {
    await using link = await startTestLink();
    await using client = createMolfClient({ url: link.server.url, token: TEST_CLIENT_TOKEN });
    await client.ready();
    const session = await client.rpc.sessions.create.mutate({ workerId: link.worker.workerId });
    const text = 'y'.repeat(MAX_PROMPT_CHARS);
    await client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text });
    const { messages } = await client.rpc.sessions.get.query({ sessionId: session.sessionId });
    expect(messages[0]).toMatchObject({ role: 'user', text });
  });

  it('still applies the normal limit after authentication', async () => {
    await using data = await createTempDir();
    await using server = await startTestServer({ dataDir: data.path, maxPayloadBytes: 2 * 1024 * 1024 });
    await using raw = await openRawWebSocket(server.httpUrl);
    raw.write(connectionParams(TEST_CLIENT_TOKEN));
    raw.write(clientTextFrame('x'.repeat(1024), { announcedLength: 3 * 1024 * 1024 }));
    expect(closeCode(await firstAnswer(raw))).toBe(1009);
  });
});

const noNamespace = await whyNoIpv6Namespace();

describe.skipIf(noNamespace !== undefined)('unauthenticated sockets of IPv6 peers (in a network namespace)', () => {
  it('counts an IPv6 peer by its /64: a 17th waiting socket from another address of it is refused, one from another /64 is not', async () => {
    const server = 'fd00:0:0:1::1';
    const sameNetwork = Array.from({ length: 17 }, (_, index) => `fd00:0:0:1::${(0x100 + index).toString(16)}`);
    const otherNetwork = 'fd00:0:0:2::1';
    await using namespace = await createIpv6Namespace([server, ...sameNetwork, otherNetwork]);
    const [command, args] = namespace.inside(process.execPath, [
      fileURLToPath(new URL('./testing/unauthenticated-sockets-process.ts', import.meta.url)),
      server,
      ...sameNetwork,
      otherNetwork,
    ]);
    // `ip netns exec` execs the command: killing it at the deadline kills the server process.
    const { stdout } = await execFileAsync(command, args, { timeout: 120_000, killSignal: 'SIGKILL' });
    expect(JSON.parse(stdout)).toEqual({ refused: [sameNetwork[16]] });
  });
});

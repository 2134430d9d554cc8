import { createServer, type Server, Socket } from 'node:net';
import { createSecureContext, TLSSocket, connect as tlsConnect } from 'node:tls';

export type InterceptorTarget = {
  host: string;
  port: number;
  /** The real server's certificate: the interceptor's own link to it is TLS, trusting this. */
  ca: string;
};

/**
 * A TCP front for a TLS server, for tests of what a client sends to whom. In `passthrough` it
 * forwards bytes untouched (the client talks TLS with the real server through it). In `intercept`
 * it is a man in the middle: it ends the client's TLS with a certificate of its own, keeps every
 * byte the client sends in clear (`received`), and forwards them over its own TLS link to the real
 * server, so a client that accepts its certificate works normally and leaks everything.
 */
export async function startTlsInterceptor(options: { target: InterceptorTarget }) {
  let mode: { type: 'passthrough' } | { type: 'intercept'; cert: string; key: string } = { type: 'passthrough' };
  const received: Buffer[] = [];
  let interceptedHandshakes = 0;
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
  };

  const server: Server = createServer((inbound) => {
    track(inbound);
    if (mode.type === 'passthrough') {
      const outbound = new Socket();
      track(outbound);
      outbound.connect(options.target.port, options.target.host);
      inbound.pipe(outbound).pipe(inbound);
      inbound.on('close', () => outbound.destroy());
      outbound.on('close', () => inbound.destroy());
      return;
    }
    const secure = new TLSSocket(inbound, {
      isServer: true,
      secureContext: createSecureContext({ cert: mode.cert, key: mode.key }),
    });
    track(secure);
    secure.on('secure', () => {
      interceptedHandshakes += 1;
      const outbound = tlsConnect({
        host: options.target.host,
        port: options.target.port,
        ca: options.target.ca,
        checkServerIdentity: () => undefined,
      });
      track(outbound);
      secure.on('data', (chunk: Buffer) => {
        received.push(Buffer.from(chunk));
        outbound.write(chunk);
      });
      outbound.on('data', (chunk: Buffer) => secure.write(chunk));
      secure.on('close', () => outbound.destroy());
      outbound.on('close', () => secure.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };

  return {
    port,
    url: `wss://127.0.0.1:${port}`,
    /** Forwards bytes untouched from now on (new connections). */
    passThrough() {
      mode = { type: 'passthrough' };
    },
    /** Ends the clients' TLS with this certificate from now on (new connections), and cuts the open ones. */
    intercept(certificate: { cert: string; key: string }) {
      mode = { type: 'intercept', ...certificate };
      for (const socket of sockets) socket.destroy();
    },
    /** Everything clients sent in clear to the interceptor (only in `intercept`, after a completed handshake). */
    received(): Buffer {
      return Buffer.concat(received);
    },
    /**
     * What clients sent, readable: the HTTP request heads and the payloads of their WebSocket frames
     * (clients mask every frame, so a token in a frame is not in the raw bytes). Frames compressed
     * with permessage-deflate are left out.
     */
    receivedText(): string {
      return readClientStream(Buffer.concat(received));
    },
    /** How many clients completed a TLS handshake with the interceptor's certificate. */
    interceptedHandshakes: () => interceptedHandshakes,
    async close(): Promise<void> {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
export type TlsInterceptor = Awaited<ReturnType<typeof startTlsInterceptor>>;

/** HTTP heads in clear, then each unmasked, uncompressed WebSocket frame payload, of one or more streams. */
function readClientStream(bytes: Buffer): string {
  const parts: string[] = [];
  let offset = 0;
  while (offset < bytes.length) {
    const headEnd = bytes.indexOf('\r\n\r\n', offset);
    if (bytes.subarray(offset, offset + 4).toString('latin1') === 'GET ' && headEnd !== -1) {
      parts.push(bytes.subarray(offset, headEnd).toString('utf8'));
      offset = headEnd + 4;
      continue;
    }
    if (offset + 2 > bytes.length) break;
    const first = bytes[offset] as number;
    const second = bytes[offset + 1] as number;
    let length = second & 0x7f;
    let cursor = offset + 2;
    if (length === 126) {
      length = bytes.readUInt16BE(cursor);
      cursor += 2;
    } else if (length === 127) {
      length = Number(bytes.readBigUInt64BE(cursor));
      cursor += 8;
    }
    const masked = (second & 0x80) !== 0;
    const mask = masked ? bytes.subarray(cursor, cursor + 4) : undefined;
    if (masked) cursor += 4;
    const payload = Buffer.from(bytes.subarray(cursor, cursor + length));
    if (mask !== undefined) {
      for (let index = 0; index < payload.length; index += 1) {
        payload[index] = (payload[index] as number) ^ (mask[index % 4] as number);
      }
    }
    const compressed = (first & 0x40) !== 0;
    if (!compressed) parts.push(payload.toString('utf8'));
    offset = cursor + length;
  }
  return parts.join('\n');
}

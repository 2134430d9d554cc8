import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { request as httpRequest } from 'node:http';
import type { Socket } from 'node:net';

/** A frame as the server sent it. */
export type ServerFrame = { opcode: number; payload: Buffer };

/**
 * A WebSocket opened by hand, for tests that need control over the bytes on the wire: several
 * frames in one write, or a frame header announcing more than is ever sent.
 */
export type RawWebSocket = AsyncDisposable & {
  socket: Socket;
  /** Writes the bytes as they are, in one write. */
  write(bytes: Buffer): void;
  /** The next frame from the server; rejects when the connection ends first. */
  nextFrame(options?: { timeoutMs?: number }): Promise<ServerFrame>;
};

/** Opens `{httpUrl}/?connectionParams=1` as tRPC's client does, with the given extra headers. */
export async function openRawWebSocket(httpUrl: string, headers: Record<string, string> = {}): Promise<RawWebSocket> {
  const request = httpRequest(`${httpUrl}/?connectionParams=1`, {
    headers: {
      Connection: 'Upgrade',
      Upgrade: 'websocket',
      'Sec-WebSocket-Key': randomBytes(16).toString('base64'),
      'Sec-WebSocket-Version': '13',
      ...headers,
    },
  });
  request.end();
  const [, socket, head] = (await once(request, 'upgrade')) as [unknown, Socket, Buffer];
  let buffered = head;
  let ended = false;
  const waiters = new Set<() => void>();
  const wake = () => {
    for (const waiter of waiters) waiter();
  };
  socket.on('data', (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk]);
    wake();
  });
  socket.on('close', () => {
    ended = true;
    wake();
  });
  socket.on('error', () => {});

  function takeFrame(): ServerFrame | undefined {
    if (buffered.length < 2) return undefined;
    const opcode = (buffered[0] as number) & 0x0f;
    let length = (buffered[1] as number) & 0x7f;
    let offset = 2;
    if (length === 126) {
      if (buffered.length < 4) return undefined;
      length = buffered.readUInt16BE(2);
      offset = 4;
    } else if (length === 127) {
      if (buffered.length < 10) return undefined;
      length = Number(buffered.readBigUInt64BE(2));
      offset = 10;
    }
    if (buffered.length < offset + length) return undefined;
    const payload = buffered.subarray(offset, offset + length);
    buffered = buffered.subarray(offset + length);
    return { opcode, payload };
  }

  return {
    socket,
    write: (bytes) => void socket.write(bytes),
    async nextFrame({ timeoutMs = 10_000 } = {}) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const frame = takeFrame();
        if (frame !== undefined) return frame;
        if (ended) throw new Error('the connection ended');
        if (Date.now() > deadline) throw new Error('no frame from the server in time');
        await new Promise<void>((resolve) => {
          const timer = setTimeout(done, 50);
          function done() {
            clearTimeout(timer);
            waiters.delete(done);
            resolve();
          }
          waiters.add(done);
        });
      }
    },
    async [Symbol.asyncDispose]() {
      socket.destroy();
    },
  };
}

/**
 * A masked client text frame (the zero mask leaves the payload as it is). `announcedLength`
 * puts a different length in the header, to send a frame's start without the rest.
 */
export function clientTextFrame(payload: string | Buffer, options: { announcedLength?: number } = {}): Buffer {
  const body = typeof payload === 'string' ? Buffer.from(payload) : payload;
  const length = options.announcedLength ?? body.length;
  let header: Buffer;
  if (length < 126) {
    header = Buffer.from([0x81, 0x80 | length]);
  } else if (length < 65_536) {
    header = Buffer.alloc(4);
    header[0] = 0x81;
    header[1] = 0x80 | 126;
    header.writeUInt16BE(length, 2);
  } else {
    header = Buffer.alloc(10);
    header[0] = 0x81;
    header[1] = 0x80 | 127;
    header.writeBigUInt64BE(BigInt(length), 2);
  }
  return Buffer.concat([header, Buffer.alloc(4), body]);
}

/** The status code of a close frame's payload. */
export function closeCode(frame: ServerFrame): number | undefined {
  return frame.opcode === 0x8 && frame.payload.length >= 2 ? frame.payload.readUInt16BE(0) : undefined;
}

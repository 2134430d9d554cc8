import { once } from 'node:events';
import { createServer } from 'node:https';
import { type AddressInfo, connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { generateCertificate } from '../tls/generate-certificate.ts';
import { answerPlainHttpOnTls } from './answer-plain-http-on-tls.ts';

async function listen(options: { firstByteTimeoutMs?: number; answerTimeoutMs?: number }) {
  const pair = await generateCertificate({ names: ['127.0.0.1'] });
  const server = createServer({ ...pair, minVersion: 'TLSv1.3' }, (_request, response) => response.end('ok'));
  const destroyAccepted = answerPlainHttpOnTls(server, options);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: (server.address() as AddressInfo).port,
    destroyAccepted,
    [Symbol.dispose]: () => {
      destroyAccepted();
      server.close();
    },
  };
}

describe('answerPlainHttpOnTls', () => {
  it('closes a connection that sends no first byte in time', async () => {
    using server = await listen({ firstByteTimeoutMs: 50 });
    const socket = connect({ host: '127.0.0.1', port: server.port });
    await once(socket, 'close');
    expect(socket.bytesRead).toBe(0);
  });

  it('destroys, on request, the connections it accepted, also those that sent nothing yet', async () => {
    using server = await listen({ firstByteTimeoutMs: 600_000 });
    const socket = connect({ host: '127.0.0.1', port: server.port });
    await once(socket, 'connect');
    const closed = once(socket, 'close');
    // Seen by the server once its 'connection' ran: poll until the destroy reaches this socket.
    const poll = setInterval(() => server.destroyAccepted(), 10);
    try {
      await closed;
    } finally {
      clearInterval(poll);
    }
    expect(socket.destroyed).toBe(true);
  });

  it('closes a plain connection after its answer within the time given, even one that keeps sending', async () => {
    using server = await listen({ answerTimeoutMs: 300 });
    const socket = connect({ host: '127.0.0.1', port: server.port });
    socket.on('error', () => {});
    await once(socket, 'connect');
    socket.write('GET / HTTP/1.1\r\nHost: x\r\n');
    // A header line a little at a time, for ever: each byte used to restart an idle timer.
    const trickle = setInterval(() => {
      if (socket.writable) socket.write('x');
    }, 50);
    let timer: NodeJS.Timeout | undefined;
    try {
      const outcome = await Promise.race([
        // Not events.once: a write into the closed socket (EPIPE) would reject it.
        new Promise((resolve) => socket.once('close', () => resolve('closed'))),
        new Promise((resolve) => {
          timer = setTimeout(resolve, 60_000, 'still open');
        }),
      ]);
      expect(outcome).toBe('closed');
    } finally {
      clearInterval(trickle);
      clearTimeout(timer);
      socket.destroy();
    }
  });
});

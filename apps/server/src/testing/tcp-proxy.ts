import type { AddressInfo } from 'node:net';
import { createServer, Socket } from 'node:net';

/**
 * A loopback TCP proxy a test can cut, to drop a live link the way a network failure does,
 * while both ends keep running.
 */
export async function startTcpProxy(target: { host: string; port: number }) {
  const sockets = new Set<Socket>();
  /** Each open connection's two sockets, inbound to outbound. */
  const pairs = new Map<Socket, Socket>();
  let accepting = true;
  const server = createServer((inbound) => {
    if (!accepting) {
      inbound.destroy();
      return;
    }
    const outbound = new Socket();
    outbound.connect(target.port, target.host);
    for (const socket of [inbound, outbound]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {});
    }
    pairs.set(inbound, outbound);
    inbound.on('close', () => pairs.delete(inbound));
    inbound.pipe(outbound).pipe(inbound);
    inbound.on('close', () => outbound.destroy());
    outbound.on('close', () => inbound.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `ws://127.0.0.1:${port}`,
    /** Drops every connection and refuses new ones until `restore()`. */
    cut() {
      accepting = false;
      for (const socket of sockets) socket.destroy();
    },
    restore() {
      accepting = true;
    },
    /** Stops forwarding on the open connections without closing them: a half-open link. */
    freeze() {
      for (const socket of sockets) {
        socket.unpipe();
        socket.pause();
      }
    },
    /** Forwards again on the frozen connections, what was sent meanwhile first: a link that was slow. */
    thaw() {
      for (const [inbound, outbound] of pairs) {
        inbound.pipe(outbound);
        outbound.pipe(inbound);
      }
    },
    async [Symbol.asyncDispose]() {
      this.cut();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

import { type AddressInfo, createServer, Socket } from 'node:net';

/** A TCP relay on loopback in front of a port, which a test can make hold what clients send. */
export type TcpRelay = AsyncDisposable & {
  /** The relay's own port: clients connect here instead of to the target. */
  port: number;
  /**
   * From now on, what clients send is read and kept instead of passed on: a request sent meanwhile
   * has left its client but never reaches the server (the server has not answered it yet).
   */
  hold(): void;
  /** Bytes kept since `hold()`. */
  heldBytes(): number;
  /** Passes on again what clients send; what was kept is dropped (its connections are gone). */
  release(): void;
  close(): Promise<void>;
};

/**
 * Relays each connection to `targetPort` on 127.0.0.1. A connection whose other side closes (the
 * server stopped, or nothing listens on the target) is closed on both sides, as a server that
 * goes away closes its sockets.
 */
export async function startTcpRelay(options: { targetPort: number }): Promise<TcpRelay> {
  const sockets = new Set<Socket>();
  let holding = false;
  let held = 0;
  const relay = createServer((client) => {
    const upstream = new Socket();
    sockets.add(client);
    sockets.add(upstream);
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('data', (chunk: Buffer) => {
      if (holding) held += chunk.length;
      else upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => client.write(chunk));
    for (const socket of [client, upstream]) {
      socket.on('close', end);
      socket.on('error', end);
    }
    upstream.connect(options.targetPort, '127.0.0.1');
  });
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  const close = async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => relay.close(() => resolve()));
  };
  return {
    port: (relay.address() as AddressInfo).port,
    hold() {
      holding = true;
      held = 0;
    },
    heldBytes: () => held,
    release() {
      holding = false;
      held = 0;
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}

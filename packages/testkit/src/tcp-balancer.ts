import { type AddressInfo, createServer, Socket } from 'node:net';

/** A TCP load balancer on loopback, as in front of several servers: no stickiness, WebSocket upgrades pass. */
export type TcpBalancer = AsyncDisposable & {
  port: number;
  /** Sends new connections to these ports from now on (as a balancer whose pool changed). */
  retarget(targetPorts: readonly number[]): void;
  /** Cuts every relayed connection (as a balancer restarting): clients reconnect through the new targets. */
  dropConnections(): void;
  /**
   * A network partition: from now on nothing crosses, in either direction, and new connections get
   * no answer; both sides still believe their connections open. `heal` delivers what was held, in order.
   */
  partition(): void;
  heal(): void;
  close(): Promise<void>;
};

/**
 * Relays each connection to the first of `targetPorts` (on 127.0.0.1) that accepts it, in order: a
 * target that is down is skipped, as a load balancer's health check would. A connection whose other
 * side closes is closed on both sides.
 */
export async function startTcpBalancer(options: { targetPorts: readonly number[] }): Promise<TcpBalancer> {
  const sockets = new Set<Socket>();
  let targetPorts = options.targetPorts;
  /** While partitioned: what was sent meanwhile, and the connections that wait to be made. */
  let held: Array<() => void> | undefined;

  /** Relays `from` to `to`, holding the data while partitioned. */
  function relay(from: Socket, to: Socket): void {
    from.on('data', (chunk: Buffer) => {
      if (held === undefined) to.write(chunk);
      else held.push(() => to.write(chunk));
    });
  }

  function connectFirst(ports: readonly number[], onConnected: (upstream: Socket) => void, onFailed: () => void) {
    const [port, ...rest] = ports;
    if (port === undefined) {
      onFailed();
      return;
    }
    const upstream = new Socket();
    upstream.once('error', () => {
      upstream.destroy();
      connectFirst(rest, onConnected, onFailed);
    });
    upstream.connect(port, '127.0.0.1', () => {
      upstream.removeAllListeners('error');
      onConnected(upstream);
    });
  }

  const server = createServer((client) => {
    sockets.add(client);
    client.pause();
    client.on('error', () => client.destroy());
    client.on('close', () => sockets.delete(client));
    const connect = () =>
      connectFirst(
        targetPorts,
        (upstream) => {
          sockets.add(upstream);
          const end = () => {
            client.destroy();
            upstream.destroy();
            sockets.delete(upstream);
          };
          upstream.on('error', end);
          upstream.on('close', end);
          client.on('close', end);
          relay(client, upstream);
          relay(upstream, client);
          client.resume();
        },
        () => client.destroy(),
      );
    if (held === undefined) connect();
    else held.push(connect);
  });
  await new Promise<void>((resolveListen) => server.listen(0, '127.0.0.1', resolveListen));
  const close = async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolveClose) => server.close(() => resolveClose()));
  };
  return {
    port: (server.address() as AddressInfo).port,
    retarget(ports) {
      targetPorts = ports;
    },
    dropConnections() {
      for (const socket of sockets) socket.destroy();
    },
    partition() {
      held ??= [];
    },
    heal() {
      const waiting = held ?? [];
      held = undefined;
      for (const deliver of waiting) deliver();
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}

import { execFile } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * Two "machines" for a test: network namespaces `server` and `worker` joined by a link, and the
 * server's namespace joined to this one by another link (for the test's own clients and its fake
 * LLM). The worker's namespace reaches nothing but the server. Made with `ip netns` and removed by
 * `remove()`; needs root (or CAP_NET_ADMIN) and iproute2.
 */
export type TwoMachines = {
  /** Namespace names, for `ip netns exec`. */
  server: string;
  worker: string;
  /** The server machine's address as the worker machine sees it. */
  serverForWorker: string;
  /** The server machine's address as this process sees it. */
  serverForHost: string;
  /** This process's address as the server machine sees it (for the fake LLM). */
  hostForServer: string;
  /** The arguments that run a command inside a namespace: `ip netns exec NAME …`. */
  inside(namespace: string, command: string, args: readonly string[]): [string, string[]];
  remove(): Promise<void>;
};

async function ip(...args: string[]): Promise<void> {
  await run('ip', args);
}

/** Why two namespaces cannot be made here, or undefined when they can (tried for real, then removed). */
export async function whyNoNetworkNamespaces(): Promise<string | undefined> {
  if (process.platform !== 'linux') return 'network namespaces are Linux only';
  if (process.getuid?.() !== 0) return 'making network namespaces needs root';
  const name = `molf-probe-${process.pid}`;
  try {
    await ip('netns', 'add', name);
  } catch (error) {
    return `ip netns add failed: ${(error as Error).message.split('\n')[0]}`;
  }
  await ip('netns', 'del', name).catch(() => {});
  return undefined;
}

/** Makes the two namespaces and their links; on a failure midway, removes what was made. */
export async function createTwoMachines(): Promise<TwoMachines> {
  const id = `${process.pid % 10_000}${randomInt(100)}`;
  const server = `molf-s-${id}`;
  const worker = `molf-w-${id}`;
  // Two /30 links in 10.(200..249).x.0/24, picked at random so parallel runs don't collide.
  const prefix = `10.${200 + randomInt(50)}.${randomInt(250)}`;
  const addresses = {
    serverForWorker: `${prefix}.1`,
    workerSide: `${prefix}.2`,
    hostForServer: `${prefix}.5`,
    serverForHost: `${prefix}.6`,
  };
  const links = { serverWorker: `ms${id}`, workerServer: `mw${id}`, host: `mh${id}`, serverHost: `mx${id}` };
  const made: string[] = [];
  const remove = async () => {
    for (const namespace of made.reverse()) await ip('netns', 'del', namespace).catch(() => {});
    // Deleting a namespace deletes its end of a veth pair, and with it the other end.
    await ip('link', 'del', links.host).catch(() => {});
  };
  try {
    for (const namespace of [server, worker]) {
      await ip('netns', 'add', namespace);
      made.push(namespace);
      await ip('-n', namespace, 'link', 'set', 'lo', 'up');
    }
    await ip(
      'link',
      'add',
      links.serverWorker,
      'netns',
      server,
      'type',
      'veth',
      'peer',
      'name',
      links.workerServer,
      'netns',
      worker,
    );
    await ip('-n', server, 'addr', 'add', `${addresses.serverForWorker}/30`, 'dev', links.serverWorker);
    await ip('-n', worker, 'addr', 'add', `${addresses.workerSide}/30`, 'dev', links.workerServer);
    await ip('-n', server, 'link', 'set', links.serverWorker, 'up');
    await ip('-n', worker, 'link', 'set', links.workerServer, 'up');

    await ip('link', 'add', links.host, 'type', 'veth', 'peer', 'name', links.serverHost, 'netns', server);
    await ip('addr', 'add', `${addresses.hostForServer}/30`, 'dev', links.host);
    await ip('-n', server, 'addr', 'add', `${addresses.serverForHost}/30`, 'dev', links.serverHost);
    await ip('link', 'set', links.host, 'up');
    await ip('-n', server, 'link', 'set', links.serverHost, 'up');
  } catch (error) {
    await remove();
    throw error;
  }
  return {
    server,
    worker,
    serverForWorker: addresses.serverForWorker,
    serverForHost: addresses.serverForHost,
    hostForServer: addresses.hostForServer,
    inside: (namespace, command, args) => ['ip', ['netns', 'exec', namespace, command, ...args]],
    remove,
  };
}

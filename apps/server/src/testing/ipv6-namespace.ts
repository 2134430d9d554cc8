import { execFile } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * A network namespace whose loopback holds the IPv6 addresses a test asks for, so that one test can
 * connect from many addresses of one /64 (and of another) as hosts on the internet do. Processes run
 * inside with `ip netns exec`; made with iproute2, needs root (or CAP_NET_ADMIN).
 */
export type Ipv6Namespace = AsyncDisposable & {
  /** The command and arguments that run `command` inside the namespace. */
  inside(command: string, args: readonly string[]): [string, string[]];
};

/** Why such a namespace cannot be made here, or undefined when it can (tried for real, then removed). */
export async function whyNoIpv6Namespace(): Promise<string | undefined> {
  if (process.platform !== 'linux') return 'network namespaces are Linux only';
  if (process.getuid?.() !== 0) return 'making a network namespace needs root';
  const name = `molf-probe6-${process.pid}`;
  try {
    await run('ip', ['netns', 'add', name]);
  } catch (error) {
    return `ip netns add failed: ${(error as Error).message.split('\n')[0]}`;
  }
  await run('ip', ['netns', 'del', name]).catch(() => {});
  return undefined;
}

/** A namespace with `addresses` (each a /64, no duplicate address detection) on its loopback. */
export async function createIpv6Namespace(addresses: readonly string[]): Promise<Ipv6Namespace> {
  const name = `molf-6-${process.pid % 10_000}${randomInt(1_000)}`;
  await run('ip', ['netns', 'add', name]);
  const remove = () => run('ip', ['netns', 'del', name]).then(() => undefined);
  try {
    await run('ip', ['-n', name, 'link', 'set', 'lo', 'up']);
    for (const address of addresses) {
      await run('ip', ['-n', name, '-6', 'addr', 'add', `${address}/64`, 'dev', 'lo', 'nodad']);
    }
  } catch (error) {
    await remove().catch(() => {});
    throw error;
  }
  return {
    inside: (command, args) => ['ip', ['netns', 'exec', name, command, ...args]],
    [Symbol.asyncDispose]: remove,
  };
}

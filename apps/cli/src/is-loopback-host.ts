import { isIPv4 } from 'node:net';

/**
 * Whether an address to listen on is this machine's loopback only: `localhost`, 127.0.0.0/8
 * (also IPv4-mapped, `::ffff:127.0.0.2`) or `::1`, with or without brackets.
 */
export function isLoopbackHost(host: string): boolean {
  const bare = (/^\[(.*)\]$/.exec(host)?.[1] ?? host).toLowerCase();
  if (bare === 'localhost' || bare === '::1' || bare === '0:0:0:0:0:0:0:1') return true;
  const ipv4 = bare.startsWith('::ffff:') ? bare.slice(7) : bare;
  return isIPv4(ipv4) && ipv4.startsWith('127.');
}

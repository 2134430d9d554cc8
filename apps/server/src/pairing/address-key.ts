import { isIPv4, isIPv6 } from 'node:net';

/**
 * The key a peer's attempts are counted under: an IPv4 address as it is (an IPv4-mapped IPv6
 * address, `::ffff:192.0.2.1`, as its IPv4 address), an IPv6 address by its /64 network (one
 * host commonly holds a whole /64, so counting single addresses would give it 2^64 budgets).
 * Anything else (no address, a socket path) counts as one key, `unknown`.
 */
export function toAddressKey(remoteAddress: string | undefined): string {
  if (remoteAddress === undefined) return 'unknown';
  const address = remoteAddress.replace(/%.*$/, '');
  if (isIPv4(address)) return address;
  if (!isIPv6(address)) return 'unknown';
  const groups = expandIPv6(address);
  if (groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff) {
    const [high = 0, low = 0] = groups.slice(6);
    return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
  }
  return `${groups
    .slice(0, 4)
    .map((group) => group.toString(16))
    .join(':')}::/64`;
}

/** The eight 16-bit groups of a valid IPv6 address (`::` filled, a trailing IPv4 part split in two). */
function expandIPv6(address: string): number[] {
  let text = address.toLowerCase();
  const ipv4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (ipv4?.[1] !== undefined) {
    const [a = 0, b = 0, c = 0, d = 0] = ipv4[1].split('.').map(Number);
    text = `${text.slice(0, ipv4.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((group) => Number.parseInt(group, 16)));
  const left = parse(head);
  if (tail === undefined) return left;
  const right = parse(tail);
  return [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
}

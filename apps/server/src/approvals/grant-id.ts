import { randomBytes } from 'node:crypto';

/** A new grant id: `g_` and 16 hex digits (64 random bits), unique among a worker's rules in practice. */
export function createGrantId(): string {
  return `g_${randomBytes(8).toString('hex')}`;
}

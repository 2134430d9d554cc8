import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { formatToken, type Kind, kindOf, type Role, TOKEN_PREFIX } from '@molf/protocol';

/** A new random token for a credential of `role`: its prefix names the role's kind, 32 random bytes follow. */
export function generateToken(role: Role | Kind): string {
  return formatToken(role === 'client' ? 'client' : kindOf(role), randomBytes(32));
}

/** Only this hash is ever stored; the token itself is shown once and never written. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** Compares two hex hashes in constant time. */
export function hashesEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && timingSafeEqual(left, right);
}

/** The kind a token's prefix claims, used only to word errors; the store decides. */
export function kindFromPrefix(token: string): Kind | undefined {
  if (token.startsWith(TOKEN_PREFIX.client)) return 'client';
  if (token.startsWith(TOKEN_PREFIX.worker)) return 'worker';
  return undefined;
}

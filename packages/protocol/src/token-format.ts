import type { Kind } from './auth.ts';

// Apart from auth.ts and its schemas: the `molf up` supervisor makes tokens and loads no zod.

/** Tokens carry their kind in a prefix so a wrong paste gets a clear error. */
export const TOKEN_PREFIX: Record<Kind, string> = { client: 'molf_c_', worker: 'molf_w_' };

/** Matches any Molf token, for redaction in logs. */
export const TOKEN_PATTERN = /molf_[cw]_[A-Za-z0-9_-]{16,}/g;

/** A token of `kind` from its secret (32 random bytes): the kind's prefix, then the bytes as base64url. */
export function formatToken(kind: Kind, secret: Uint8Array): string {
  return `${TOKEN_PREFIX[kind]}${Buffer.from(secret).toString('base64url')}`;
}

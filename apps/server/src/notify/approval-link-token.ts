import { createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';

/** What a link does: approve its call once, or deny it. */
export type LinkDecision = 'approve' | 'deny';

/** What a link token carries, signed. */
export const LinkClaimsSchema = z.strictObject({
  approvalId: z.string().min(1).max(256),
  sessionId: z.string().min(1).max(128),
  decision: z.enum(['approve', 'deny']),
  /** Epoch milliseconds after which the link no longer answers. */
  expiresAt: z.number().int().nonnegative(),
  /** Random, base64url: makes every link unique, so that its use can be remembered. */
  nonce: z.string().regex(/^[A-Za-z0-9_-]{16,64}$/),
});
export type LinkClaims = z.infer<typeof LinkClaimsSchema>;

/** Tokens longer than this are refused before any decoding. */
export const MAX_TOKEN_LENGTH = 1_024;

/** Binds the signature to this use, so a key reused elsewhere never signs a valid link by accident. */
const CONTEXT = 'molf-approval-link.v1.';

function sign(key: Buffer, payload: string): Buffer {
  return createHmac('sha256', key).update(CONTEXT).update(payload).digest();
}

/** `base64url(JSON claims).base64url(HMAC-SHA256)`: URL-safe, no padding. */
export function toLinkToken(options: { key: Buffer; claims: LinkClaims }): string {
  const payload = Buffer.from(JSON.stringify(options.claims)).toString('base64url');
  return `${payload}.${sign(options.key, payload).toString('base64url')}`;
}

/**
 * The claims of a token this key signed; `{ ok: false }` for anything else — malformed, too long,
 * or a wrong signature alike, so an answer never tells a forger which part failed. The signature
 * is compared in constant time; expiry and single use are the caller's.
 */
export function safeParseLinkToken(options: {
  key: Buffer;
  token: string;
}): { ok: true; value: LinkClaims } | { ok: false } {
  const { key, token } = options;
  if (token.length > MAX_TOKEN_LENGTH) return { ok: false };
  const match = /^([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]{43})$/.exec(token);
  if (match === null) return { ok: false };
  const [, payload = '', signature = ''] = match;
  const expected = sign(key, payload);
  const given = Buffer.from(signature, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { ok: false };
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    return { ok: false };
  }
  const parsed = LinkClaimsSchema.safeParse(json);
  return parsed.success ? { ok: true, value: parsed.data } : { ok: false };
}

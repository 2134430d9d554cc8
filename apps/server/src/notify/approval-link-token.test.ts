import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { type LinkClaims, MAX_TOKEN_LENGTH, safeParseLinkToken, toLinkToken } from './approval-link-token.ts';

const key = randomBytes(32);
const claims: LinkClaims = {
  approvalId: 'session-1:abcdef012345',
  sessionId: 'session-1',
  decision: 'approve',
  expiresAt: 1_700_000_000_000,
  nonce: randomBytes(16).toString('base64url'),
};

function flip(text: string, index: number): string {
  const character = text[index] === 'A' ? 'B' : 'A';
  return `${text.slice(0, index)}${character}${text.slice(index + 1)}`;
}

describe('approval link tokens', () => {
  it('gives back the claims of a token signed with the same key', () => {
    const token = toLinkToken({ key, claims });
    expect(token).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
    expect(safeParseLinkToken({ key, token })).toEqual({ ok: true, value: claims });
  });

  it('refuses a token signed with another key', () => {
    const token = toLinkToken({ key: randomBytes(32), claims });
    expect(safeParseLinkToken({ key, token })).toEqual({ ok: false });
  });

  it('refuses a token whose claims were changed (a deny link turned into an approve link)', () => {
    const deny = toLinkToken({ key, claims: { ...claims, decision: 'deny' } });
    const [, signature] = deny.split('.');
    const forgedPayload = Buffer.from(JSON.stringify({ ...claims, decision: 'approve' })).toString('base64url');
    expect(safeParseLinkToken({ key, token: `${forgedPayload}.${signature}` })).toEqual({ ok: false });
  });

  it('refuses a token with a changed character anywhere', () => {
    const token = toLinkToken({ key, claims });
    for (const index of [0, Math.floor(token.length / 2), token.length - 2]) {
      expect(safeParseLinkToken({ key, token: flip(token, index) })).toEqual({ ok: false });
    }
  });

  it('refuses malformed and oversized tokens the same way as forged ones', () => {
    for (const token of ['', 'abc', 'abc.def', `${'a'.repeat(MAX_TOKEN_LENGTH)}.${'b'.repeat(43)}`, '../x.y']) {
      expect(safeParseLinkToken({ key, token })).toEqual({ ok: false });
    }
  });

  it('refuses correctly signed payloads that are not claims', () => {
    const payload = Buffer.from(JSON.stringify({ approvalId: 'x' })).toString('base64url');
    const token = `${payload}.${toLinkToken({ key, claims }).split('.')[1]}`;
    expect(safeParseLinkToken({ key, token })).toEqual({ ok: false });
  });
});

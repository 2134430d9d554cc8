import { generateToken } from '@molf/server';
import { describe, expect, it } from 'vitest';
import { newToken } from './new-token.ts';

describe('tokens made by the molf up supervisor', () => {
  it('have the format of the server’s tokens: the role’s prefix and 32 random bytes', async () => {
    for (const role of ['client', 'worker'] as const) {
      const token = await newToken(role);
      const server = generateToken(role);
      expect(token.slice(0, 7)).toBe(server.slice(0, 7));
      expect(token).toMatch(/^molf_[cw]_[A-Za-z0-9_-]{43}$/);
      expect(Buffer.from(token.slice(7), 'base64url')).toHaveLength(32);
    }
  });

  it('never repeat', async () => {
    const tokens = new Set(await Promise.all(Array.from({ length: 200 }, () => newToken('worker'))));
    expect(tokens.size).toBe(200);
  });
});

import { describe, expect, it } from 'vitest';
import { ConnectionParamsSchema, roleWithArticle } from './auth.ts';

const token = 'molf_c_0123456789abcdef';

describe('ConnectionParamsSchema', () => {
  it('takes a token alone, or with the name of the client program', () => {
    expect(ConnectionParamsSchema.parse({ token })).toEqual({ token });
    expect(ConnectionParamsSchema.parse({ token, client: 'molf-cli/0.1.0' })).toEqual({
      token,
      client: 'molf-cli/0.1.0',
    });
  });

  it.each([
    ['an empty client name', ''],
    ['a client name over 100 characters', 'x'.repeat(101)],
    ['a client name with a newline (it would forge a log line)', 'molf-cli/1\nfake'],
    ['a client name with an invisible character', 'molf\u200b-cli'],
    ['a client name that is not a string', 7],
  ])('refuses %s', (_title, client) => {
    const parsed = ConnectionParamsSchema.safeParse({ token, client });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]?.path).toEqual(['client']);
  });
});

describe('roleWithArticle', () => {
  it('names each role with the article a sentence needs', () => {
    expect((['viewer', 'operator', 'admin', 'worker'] as const).map((role) => roleWithArticle(role))).toEqual([
      'a viewer',
      'an operator',
      'an admin',
      'a worker',
    ]);
  });
});

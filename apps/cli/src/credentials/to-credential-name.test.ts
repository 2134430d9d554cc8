import { CredentialNameSchema } from '@molf/protocol';
import { describe, expect, it } from 'vitest';
import { toCredentialName } from './to-credential-name.ts';

describe('a credential name made from a host or directory name', () => {
  it('keeps a name that fits as it is', () => {
    expect(toCredentialName('build-box@host', 'worker')).toBe('build-box@host');
    expect(toCredentialName('Bücher 日本語 😀', 'worker')).toBe('Bücher 日本語 😀');
  });

  it('turns control and format characters into spaces, and gives the fallback when nothing is left', () => {
    expect(toCredentialName('proj\nline\u001b[2J\u202e@host', 'worker')).toBe('proj line [2J @host');
    expect(toCredentialName('\n\t\u200b', 'worker')).toBe('worker');
  });

  it('cuts a long name to 64 UTF-16 units without splitting a character, and the server takes it', () => {
    const name = toCredentialName(`${'x'.repeat(63)}😀tail`, 'worker');
    expect(name).toBe('x'.repeat(63));
    expect(toCredentialName(`${'x'.repeat(62)}😀tail`, 'worker')).toBe(`${'x'.repeat(62)}😀`);
    for (const made of [name, toCredentialName(`a\u0007${'é'.repeat(100)}`, 'w')]) {
      expect(CredentialNameSchema.safeParse(made).success).toBe(true);
    }
  });
});

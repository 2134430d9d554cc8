import { describe, expect, it } from 'vitest';
import { formatPairingCode, generatePairingCode, safeParsePairingCode } from './pairing-code-text.ts';

describe('pairing code text', () => {
  it('generates 8 symbols of Crockford base32, never I, L, O or U', () => {
    const codes = Array.from({ length: 200 }, generatePairingCode);
    for (const code of codes) expect(code).toMatch(/^[0-9A-HJKMNP-TV-Z]{8}$/);
    // Drawn at random: 200 codes of 2^40 do not repeat.
    expect(new Set(codes).size).toBe(200);
  });

  it('shows a code as two groups of four', () => {
    expect(formatPairingCode('7K3MQ9XA')).toBe('7K3M-Q9XA');
  });

  it('reads a code as a person types it: any case, spaces and dashes, I and L as 1, O as 0', () => {
    for (const typed of ['7K3M-Q9XA', '7k3m q9xa', ' 7K3M–Q9XA ', '7k3mq9xa']) {
      expect(safeParsePairingCode(typed)).toEqual({ ok: true, value: '7K3MQ9XA' });
    }
    expect(safeParsePairingCode('IL0O-abcd')).toEqual({ ok: true, value: '1100ABCD' });
  });

  it('refuses a symbol outside the alphabet, naming it', () => {
    expect(safeParsePairingCode('7K3M-Q9XU')).toEqual({ ok: false, error: expect.stringContaining('"U"') });
    expect(safeParsePairingCode('7K3M-Q9X!')).toEqual({ ok: false, error: expect.stringContaining('"!"') });
  });

  it('refuses a code of the wrong length, saying how long one is', () => {
    expect(safeParsePairingCode('7K3M-Q9X')).toEqual({
      ok: false,
      error: 'a pairing code has 8 symbols (XXXX-XXXX); this one has 7',
    });
    expect(safeParsePairingCode('123456')).toMatchObject({ ok: false });
  });
});

import { randomInt } from 'node:crypto';

/**
 * Crockford's base32: digits and letters without I, L, O and U, so that nothing read aloud or
 * copied by hand is mistaken for another symbol.
 */
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
/** 8 symbols of 32: 2^40 codes, of which at most 5 are live at once. */
export const PAIRING_CODE_LENGTH = 8;

/** A new code, 8 symbols drawn with the system's cryptographic random source, without grouping. */
export function generatePairingCode(): string {
  let code = '';
  for (let index = 0; index < PAIRING_CODE_LENGTH; index += 1) code += ALPHABET[randomInt(ALPHABET.length)];
  return code;
}

/** A code as shown to people: `XXXX-XXXX`. */
export function formatPairingCode(code: string): string {
  return `${code.slice(0, 4)}-${code.slice(4)}`;
}

/**
 * A code as a person typed it, made canonical: case, spaces and dashes do not matter, I and L read
 * as 1, O as 0. An error says what is wrong with it, in a sentence.
 */
export function safeParsePairingCode(typed: string): { ok: true; value: string } | { ok: false; error: string } {
  const value = typed
    .toUpperCase()
    .replace(/[\s\-\u2010-\u2015]/gu, '')
    .replace(/[IL]/g, '1')
    .replace(/O/g, '0');
  const stray = [...value].find((symbol) => !ALPHABET.includes(symbol));
  if (stray !== undefined) {
    return {
      ok: false,
      error: `a pairing code has only digits and the letters A to Z without U; this one holds ${JSON.stringify(stray)}`,
    };
  }
  if (value.length !== PAIRING_CODE_LENGTH) {
    return {
      ok: false,
      error: `a pairing code has ${PAIRING_CODE_LENGTH} symbols (XXXX-XXXX); this one has ${value.length}`,
    };
  }
  return { ok: true, value };
}

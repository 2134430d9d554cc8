import { randomBytes, scrypt } from 'node:crypto';

/**
 * scrypt's cost for a code: about 16 MiB and tens of milliseconds a hash. A code has only 2^40
 * values, so a fast hash of it (SHA-256) stolen with the file could be searched through within the
 * code's 5 minutes; at this cost the search takes years. Redemption pays it once per attempt,
 * and the rate limits bound how many attempts there are.
 */
const COST = { N: 2 ** 14, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };
const KEY_BYTES = 32;

/** A new salt for a pairing-codes file, base64. */
export function generatePairingSalt(): string {
  return randomBytes(16).toString('base64');
}

/** The stored form of a canonical code (see `safeParsePairingCode`), hex. */
export function hashPairingCode(code: string, salt: string): Promise<string> {
  return new Promise((resolve, reject) => {
    scrypt(code, Buffer.from(salt, 'base64'), KEY_BYTES, COST, (error, key) => {
      if (error === null) resolve(key.toString('hex'));
      else reject(error);
    });
  });
}

import { closeSync, openSync, readSync } from 'node:fs';
import { formatToken, type Kind } from '@molf/protocol';

const SECRET_BYTES = 32;

/**
 * 32 bytes from the kernel's random source, read as a file: the supervisor would otherwise load
 * node:crypto (and OpenSSL's pages, 3 MiB) for two tokens. Where there is no /dev/urandom
 * (Windows), node:crypto does it.
 */
async function randomSecret(): Promise<Uint8Array> {
  const secret = new Uint8Array(SECRET_BYTES);
  try {
    const fd = openSync('/dev/urandom', 'r');
    try {
      let filled = 0;
      while (filled < SECRET_BYTES) filled += readSync(fd, secret, filled, SECRET_BYTES - filled, null);
    } finally {
      closeSync(fd);
    }
    return secret;
  } catch {
    const { randomBytes } = await import('node:crypto');
    return randomBytes(SECRET_BYTES);
  }
}

/** A new token of `kind`, in the same format as the server's `generateToken`. */
export async function newToken(kind: Kind): Promise<string> {
  return formatToken(kind, await randomSecret());
}

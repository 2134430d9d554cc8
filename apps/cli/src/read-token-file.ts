import { open } from 'node:fs/promises';
import { MolfError } from '@molf/protocol';

/** Far more than any token; a larger file is the wrong file, and is not read to its end. */
const MAX_TOKEN_FILE_BYTES = 4096;

export type TokenFile = {
  token: string;
  /** Set when other users may read the file: what to tell the person running Molf. */
  warning?: string;
};

/**
 * Reads a token from a file (`--token-file`), so it is never in an environment or a command
 * line. The file holds the token alone; trailing newlines and spaces are dropped.
 *
 * A file that group or others may read is taken with a warning, not refused: the secret mounts of
 * Docker (0444) and Kubernetes (0644 by default) are read-only to the user who reads them, and
 * the directory or the container is what protects them. Pipes (`--token-file <(pass show molf)`)
 * are read as they are.
 */
export async function readTokenFile(path: string): Promise<TokenFile> {
  let text: string;
  let mode: number | undefined;
  try {
    const handle = await open(path, 'r');
    try {
      const stats = await handle.stat();
      if (stats.isDirectory()) throw new MolfError('config_invalid', `the token file ${path} is not a file`);
      if (stats.isFile()) mode = stats.mode & 0o777;
      const buffer = Buffer.alloc(MAX_TOKEN_FILE_BYTES + 1);
      let length = 0;
      for (;;) {
        const { bytesRead } = await handle.read(buffer, length, buffer.length - length);
        if (bytesRead === 0) break;
        length += bytesRead;
        if (length > MAX_TOKEN_FILE_BYTES) {
          throw new MolfError(
            'config_invalid',
            `the token file ${path} is larger than ${MAX_TOKEN_FILE_BYTES} bytes: it should hold only the token`,
          );
        }
      }
      text = buffer.subarray(0, length).toString('utf8');
    } finally {
      await handle.close();
    }
  } catch (error) {
    if (error instanceof MolfError) throw error;
    throw new MolfError('config_invalid', `cannot read the token file ${path}: ${(error as Error).message}`, {
      cause: error,
    });
  }

  const token = text.trimEnd();
  if (token === '') throw new MolfError('config_invalid', `the token file ${path} is empty`);
  if (/\s/.test(token)) {
    throw new MolfError('config_invalid', `the token file ${path} should hold only the token, on one line`);
  }
  if (mode !== undefined && (mode & 0o044) !== 0) {
    const shown = mode.toString(8).padStart(4, '0');
    return { token, warning: `other users can read the token file ${path} (mode ${shown}): chmod 600 ${path}` };
  }
  return { token };
}

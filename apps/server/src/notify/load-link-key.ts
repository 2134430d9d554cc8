import { randomBytes } from 'node:crypto';
import { link, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { MolfError } from '@molf/protocol';

const KEY_BYTES = 32;

function isMissing(error: unknown): boolean {
  return (error as NodeJS.ErrnoException).code === 'ENOENT';
}

/** Makes the key unless it exists; never replaces one. */
async function createKey(path: string): Promise<void> {
  // Written whole under a temporary name, then linked into place: a link fails if the key exists,
  // so two servers starting on one data dir never replace or half-read each other's key.
  const temporary = `${path}.${process.pid}.${randomBytes(4).toString('hex')}`;
  try {
    await writeFile(temporary, randomBytes(KEY_BYTES), { flag: 'wx', mode: 0o600 });
    await link(temporary, path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
      throw new MolfError('internal', `cannot create the link key ${path}: ${(error as Error).message}`, {
        cause: error,
      });
    }
  } finally {
    await rm(temporary, { force: true });
  }
}

/**
 * The key that signs approval links: 32 random bytes in `{dataDir}/secrets/link-key` (0600, in a
 * 0700 directory), made at the first start that needs it and kept, so links sent before a restart
 * still verify (their approvals, which do not survive a restart, then answer 410).
 */
export async function loadLinkKey(dataDir: string): Promise<Buffer> {
  const directory = join(dataDir, 'secrets');
  const path = join(directory, 'link-key');
  await mkdir(directory, { recursive: true, mode: 0o700 });
  const key = await readFile(path).catch(async (error: unknown) => {
    if (!isMissing(error)) throw error;
    await createKey(path);
    return readFile(path);
  });
  if (key.length !== KEY_BYTES) {
    throw new MolfError(
      'config_invalid',
      `the link key ${path} is damaged (${key.length} bytes, expected ${KEY_BYTES}): delete it and restart; links already sent stop working`,
    );
  }
  return key;
}

import { mkdir, readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { MolfError } from '@molf/protocol';
// The lock alone, not the server's index (which loads the providers): the worker uses these files too.
import { withFileLock } from '@molf/server/file-lock';
import { z } from 'zod';
import { replaceFile } from '../connection-store.ts';

/**
 * A small JSON file of secrets or trust decisions in the client dir (pins, logins, worker tokens):
 * read whole, checked by its schema, replaced atomically (0600, directory 0700). A damaged file is
 * an error naming it, never read as empty: an empty pin list would let the next certificate in
 * without a word.
 */
export function privateJsonFile<T>(path: string, schema: z.ZodType<T>, empty: () => T) {
  async function read(): Promise<T> {
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return empty();
      throw new MolfError('config_invalid', `cannot read ${path}: ${(error as Error).message}`, { cause: error });
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      throw new MolfError(
        'config_invalid',
        `${path} is not valid JSON (${(error as Error).message}): fix it, or remove it to start over`,
        { cause: error },
      );
    }
    const parsed = schema.safeParse(value);
    if (!parsed.success) {
      throw new MolfError(
        'config_invalid',
        `${path} is damaged (fix it, or remove it to start over):\n${z.prettifyError(parsed.error)}`,
      );
    }
    return parsed.data;
  }

  async function write(value: T): Promise<void> {
    await mkdir(dirname(path), { recursive: true, mode: 0o700 });
    await replaceFile(path, `${JSON.stringify(value, null, 2)}\n`);
  }

  /**
   * Reads, changes and writes back, holding the file's lock against other Molf processes (two
   * `molf worker --pair` at once must not lose a saved token); the change's result is returned.
   */
  async function update<R>(change: (value: T) => R): Promise<R> {
    await mkdir(dirname(path), { recursive: true, mode: 0o700 });
    return withFileLock(path, async () => {
      const value = await read();
      const result = change(value);
      await write(value);
      return result;
    });
  }

  return { path, read, write, update };
}

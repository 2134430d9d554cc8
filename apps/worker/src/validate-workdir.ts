import { constants } from 'node:fs';
import { access, realpath, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { MolfError } from '@molf/protocol';

/** Resolves the workdir to its canonical path, or fails with `workdir_invalid` saying why. */
export async function validateWorkdir(workdir: string): Promise<string> {
  const absolute = resolve(workdir);
  let canonical: string;
  try {
    canonical = await realpath(absolute);
  } catch (error) {
    throw new MolfError('workdir_invalid', `workdir ${absolute} does not exist`, { cause: error });
  }
  const info = await stat(canonical);
  if (!info.isDirectory()) throw new MolfError('workdir_invalid', `workdir ${absolute} is not a directory`);
  try {
    await access(canonical, constants.R_OK | constants.W_OK | constants.X_OK);
  } catch (error) {
    throw new MolfError('workdir_invalid', `workdir ${absolute} is not readable and writable by this user`, {
      cause: error,
    });
  }
  return canonical;
}

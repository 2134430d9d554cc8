import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { delimiter, isAbsolute, join, resolve } from 'node:path';

/** What looking up a command found: its path, or why there is none. */
export type ExecutableLookup =
  | { found: true; path: string }
  | { found: false; reason: 'not_on_path' | 'missing' | 'not_executable'; path?: string };

async function isExecutableFile(path: string): Promise<boolean | 'missing'> {
  try {
    if (!(await stat(path)).isFile()) return false;
  } catch {
    return 'missing';
  }
  try {
    await access(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Finds `command` as a child started with it would: a name is looked up on `PATH` (absolute entries
 * only, as the worker does: a relative one would depend on each child's directory); a path
 * (`./bin/server`, `/usr/bin/node`) is taken against `cwd`.
 */
export async function findExecutable(
  command: string,
  options: { env: NodeJS.ProcessEnv; cwd: string },
): Promise<ExecutableLookup> {
  if (command.includes('/')) {
    const path = resolve(options.cwd, command);
    const executable = await isExecutableFile(path);
    if (executable === true) return { found: true, path };
    return { found: false, reason: executable === 'missing' ? 'missing' : 'not_executable', path };
  }
  for (const directory of (options.env.PATH ?? '').split(delimiter)) {
    if (directory === '' || !isAbsolute(directory)) continue;
    const path = join(directory, command);
    if ((await isExecutableFile(path)) === true) return { found: true, path };
  }
  return { found: false, reason: 'not_on_path' };
}

import { accessSync, constants } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';

/** bubblewrap's absolute path on `PATH`, or undefined when it is not installed. */
export function findBwrap(env: NodeJS.ProcessEnv): string | undefined {
  for (const directory of (env.PATH ?? '').split(delimiter)) {
    // A relative PATH entry would depend on the directory of each spawn.
    if (directory === '' || !isAbsolute(directory)) continue;
    const candidate = join(directory, 'bwrap');
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not here.
    }
  }
  return undefined;
}

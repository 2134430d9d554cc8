import { homedir } from 'node:os';
import { type MolfPaths, resolveMolfPaths } from '@molf/worker/molf-paths';

/**
 * Molf's paths for this process: its environment, the user's home, and a `--data-dir` when one was
 * given. Called after `prepareMolfPaths` (the CLI's pre-action hook), which may have pointed
 * `$MOLF_HOME` at `~/.molf` for this run while a live server uses it.
 */
export function currentMolfPaths(options: { dataDir?: string | undefined } = {}): MolfPaths {
  return resolveMolfPaths({ env: process.env, home: homedir(), dataDir: options.dataDir });
}

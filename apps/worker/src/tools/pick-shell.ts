import { accessSync, constants } from 'node:fs';
import { basename } from 'node:path';

/** Shells whose syntax is not POSIX enough for `-c` commands written for sh/bash. */
const INCOMPATIBLE = new Set(['fish', 'nu', 'nushell', 'xonsh', 'elvish']);

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The shell commands run in: the user's $SHELL unless it is one of the incompatible ones, else
 * zsh on macOS, bash, and /bin/sh as the last resort.
 */
export function pickShell(
  options: { env?: NodeJS.ProcessEnv; platform?: NodeJS.Platform; executable?: (path: string) => boolean } = {},
): string {
  const env = options.env ?? process.env;
  const platform = options.platform ?? process.platform;
  const executable = options.executable ?? isExecutable;
  const candidates = [
    env.SHELL,
    platform === 'darwin' ? '/bin/zsh' : undefined,
    '/bin/bash',
    '/usr/bin/bash',
    '/usr/local/bin/bash',
  ];
  for (const candidate of candidates) {
    if (candidate === undefined || candidate === '') continue;
    if (INCOMPATIBLE.has(basename(candidate))) continue;
    if (executable(candidate)) return candidate;
  }
  return '/bin/sh';
}

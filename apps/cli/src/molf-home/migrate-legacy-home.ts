import { lstat, readdir, readFile, readlink, rmdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { MolfPaths } from '@molf/worker/molf-paths';
import { exists, moveEntry } from './move-entry.ts';

/** Where the entries of `~/.molf` go: the XDG places. */
export type LegacyHomeTargets = Pick<MolfPaths, 'configDir' | 'dataDir' | 'stateDir' | 'logsDir' | 'clientDir'>;

/** The pointer file left in `~/.molf`, recognised by its first line. */
export const LEGACY_README = 'README.md';
const README_TITLE = '# Molf has moved out of this directory';

/** Suffix of a file of `~/.molf` whose place in the new directories was taken: kept beside it. */
export const SET_ASIDE_SUFFIX = '.from-dot-molf';

/** Where one top-level entry of `~/.molf` belongs: config, logs and connections by name, the rest is data. */
export function destinationOf(name: string, targets: LegacyHomeTargets): string {
  switch (name) {
    case 'config.jsonc':
    case 'worker.jsonc':
      return join(targets.configDir, name);
    case 'logs':
      return targets.logsDir;
    case 'connections.json':
      return join(targets.clientDir, name);
    default:
      return join(targets.dataDir, name);
  }
}

async function isPointerFile(path: string): Promise<boolean> {
  try {
    return (await readFile(path, 'utf8')).startsWith(README_TITLE);
  } catch {
    return false;
  }
}

/**
 * The entries of `legacyDir` still to move: everything but the pointer file and the links a
 * migration left to where each entry went (an older Molf writing through a link changes nothing;
 * one that replaced a link with a file of its own makes that entry pending again).
 */
export async function findPendingEntries(legacyDir: string, targets: LegacyHomeTargets): Promise<string[]> {
  const pending: string[] = [];
  for (const name of (await readdir(legacyDir)).sort()) {
    const path = join(legacyDir, name);
    if (name === LEGACY_README && (await isPointerFile(path))) continue;
    const stats = await lstat(path);
    if (stats.isSymbolicLink() && (await readlink(path)) === destinationOf(name, targets)) continue;
    pending.push(name);
  }
  return pending;
}

/** What a migration did. */
export type LegacyHomeMigration = {
  /** Entries moved into a place that was free. */
  moved: Array<{ from: string; to: string }>;
  /**
   * Files (or trees) whose place was taken: nothing in the new place is replaced, so each is moved
   * beside what is there, named with {@link SET_ASIDE_SUFFIX}, for a person to compare.
   */
  setAside: Array<{ from: string; to: string; taken: string }>;
};

/** `taken` with the suffix, numbered when that name is taken too. */
async function freeNameBeside(taken: string): Promise<string> {
  for (let count = 1; ; count += 1) {
    const candidate = `${taken}${SET_ASIDE_SUFFIX}${count === 1 ? '' : `-${count}`}`;
    if (!(await exists(candidate))) return candidate;
  }
}

async function isRealDirectory(path: string): Promise<boolean> {
  return (await lstat(path)).isDirectory();
}

/** Moves `from` to `to`; directories present on both sides are merged entry by entry. */
async function place(from: string, to: string, result: LegacyHomeMigration): Promise<void> {
  if (!(await exists(to))) {
    await moveEntry(from, to);
    result.moved.push({ from, to });
    return;
  }
  if ((await isRealDirectory(from)) && (await isRealDirectory(to))) {
    for (const name of (await readdir(from)).sort()) await place(join(from, name), join(to, name), result);
    await rmdir(from);
    return;
  }
  const aside = await freeNameBeside(to);
  await moveEntry(from, aside);
  result.setAside.push({ from, to: aside, taken: to });
}

function pointerText(targets: LegacyHomeTargets): string {
  return [
    README_TITLE,
    '',
    'Molf keeps its files where the XDG Base Directory Specification puts them:',
    '',
    `- config (config.jsonc): ${targets.configDir}`,
    `- data (credentials, sessions, workers, cron, audit): ${targets.dataDir}`,
    `- logs, saved connections and chat history: ${targets.stateDir}`,
    '',
    `What this directory held was moved there on ${new Date().toISOString().slice(0, 10)}. The entries left`,
    'here are links to their new places, so an older Molf still finds them. Remove this directory once',
    'no older Molf runs on this machine. To keep everything in one directory, set MOLF_HOME.',
    '',
  ].join('\n');
}

/**
 * Moves the entries of `legacyDir` (`~/.molf`) to the XDG places, never replacing anything there
 * (see {@link LegacyHomeMigration}), and leaves in `legacyDir` a link to each entry's new place and
 * a README saying where everything went. The caller holds the migration lock and has made sure
 * nothing uses `legacyDir`. Stops at the first failure, with what was moved so far linked back, so
 * `legacyDir` stays complete either way.
 */
export async function migrateLegacyHome(options: {
  legacyDir: string;
  targets: LegacyHomeTargets;
}): Promise<LegacyHomeMigration> {
  const { legacyDir, targets } = options;
  const result: LegacyHomeMigration = { moved: [], setAside: [] };
  for (const name of await findPendingEntries(legacyDir, targets)) {
    const from = join(legacyDir, name);
    const to = destinationOf(name, targets);
    await place(from, to, result);
    if (!(await exists(from))) await symlink(to, from);
  }
  await writeFile(join(legacyDir, LEGACY_README), pointerText(targets), { mode: 0o600 });
  return result;
}

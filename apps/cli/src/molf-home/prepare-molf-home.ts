import { mkdir, open, readFile, realpath, rm, stat } from 'node:fs/promises';
import { basename, join, relative, sep } from 'node:path';
import { type MolfPaths, resolveMolfPaths } from '@molf/worker/molf-paths';
import { type DirectoryUser, findDirectoryUsers } from './find-directory-users.ts';
import { findPendingEntries, type LegacyHomeMigration, migrateLegacyHome } from './migrate-legacy-home.ts';

/** What {@link prepareMolfHome} found and did. */
export type MolfHomeOutcome =
  | { type: 'none' }
  | { type: 'migrated'; migration: LegacyHomeMigration }
  /** `~/.molf` is used as before for this run (`$MOLF_HOME`/`$MOLF_CLIENT_DIR` point at it). */
  | { type: 'kept'; reason: 'in_use'; users: DirectoryUser[] }
  | { type: 'kept'; reason: 'failed'; error: Error };

/** The lock that keeps two `molf` processes starting at once from moving the same files. */
const LOCK_NAME = '.moving-dot-molf.lock';
/** How long a process waits for another one's migration before it gives up and keeps `~/.molf`. */
const LOCK_WAIT_MS = 60_000;

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function canonical(path: string): Promise<string | undefined> {
  try {
    return await realpath(path);
  } catch {
    return undefined;
  }
}

function isWithin(path: string, dir: string): boolean {
  const rest = relative(dir, path);
  return rest === '' || (!rest.startsWith(`..${sep}`) && rest !== '..' && !rest.startsWith(sep));
}

/**
 * Takes the lock file in the new state directory, waiting while a live process holds it; a lock
 * left by a process that died is taken over. Resolves with its release, or undefined after the wait.
 */
async function takeLock(stateDir: string): Promise<(() => Promise<void>) | undefined> {
  await mkdir(stateDir, { recursive: true, mode: 0o700 });
  const file = join(stateDir, LOCK_NAME);
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      const handle = await open(file, 'wx', 0o600);
      await handle.writeFile(String(process.pid));
      await handle.close();
      return () => rm(file, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = Number((await readFile(file, 'utf8').catch(() => '')).trim());
    if (!Number.isInteger(holder) || holder <= 0 || !isAlive(holder)) {
      // A lock file being written this instant reads empty: give its writer a moment first.
      await new Promise((resolve) => setTimeout(resolve, 100));
      const again = Number((await readFile(file, 'utf8').catch(() => '')).trim());
      if (again === holder) await rm(file, { force: true });
      continue;
    }
    if (Date.now() > deadline) return undefined;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** `~/…` for a path in the home directory: notices stay short. */
function shown(path: string, home: string): string {
  return isWithin(path, home) && path !== home ? `~${sep}${relative(home, path)}` : path;
}

/** A Molf entry point on a command line: the launcher, the bundle's or the sources' main, the `molf up` supervisor. */
const MOLF_SCRIPT = /(^|\/)(molf|molf\.js|main\.ts|up-supervisor\.cjs)$/;

/**
 * `pid 4242 (molf.js server --data-dir ~/.molf)`: for a Molf process its script and arguments (not
 * node's path and flags), for any other its command line; at most 100 characters.
 */
function describeUser(user: DirectoryUser, home: string): string {
  const script = user.argv.findIndex((word) => MOLF_SCRIPT.test(word));
  const words = script === -1 ? user.argv : [basename(user.argv[script] as string), ...user.argv.slice(script + 1)];
  const command = words.map((word) => shown(word, home)).join(' ');
  return `pid ${user.pid} (${command.length > 100 ? `${command.slice(0, 99)}…` : command})`;
}

/** Points this process (and what it starts) at `~/.molf` for this run, as an older Molf would use it. */
function keepLegacyHome(env: NodeJS.ProcessEnv, legacyDir: string): void {
  if (env.MOLF_CLIENT_DIR === undefined || env.MOLF_CLIENT_DIR === '') env.MOLF_CLIENT_DIR = legacyDir;
  if (env.MOLF_HOME === undefined || env.MOLF_HOME === '') env.MOLF_HOME = legacyDir;
}

/**
 * Before a command runs (on Linux): if `~/.molf`, where Molf kept everything before it followed
 * XDG, still holds entries, moves them to the XDG places ({@link migrateLegacyHome}) and says so on
 * `notice`. Not while another process uses `~/.molf` (a `molf up` or `molf server` of an older Molf,
 * whose files must not move under it): then this run uses `~/.molf` as before (by setting
 * `$MOLF_HOME` and `$MOLF_CLIENT_DIR` in `env`, which the processes it starts inherit), with a notice,
 * and a later start moves it. Nothing happens when `~/.molf` is the data or client dir named
 * explicitly, or when nothing is left to move.
 */
export async function prepareMolfHome(options: {
  /** Read, and changed when `~/.molf` is kept for this run. */
  env: NodeJS.ProcessEnv;
  home: string;
  /** Default `process.platform`: only Linux moves to XDG. */
  platform?: NodeJS.Platform;
  /** An explicit `--data-dir`. */
  dataDir?: string | undefined;
  notice: (line: string) => void;
}): Promise<MolfHomeOutcome> {
  const { env, home } = options;
  if ((options.platform ?? process.platform) !== 'linux') return { type: 'none' };
  const legacyDir = join(home, '.molf');
  const legacy = await canonical(legacyDir);
  if (legacy === undefined || !(await stat(legacy)).isDirectory()) return { type: 'none' };
  for (const named of [options.dataDir, env.MOLF_HOME, env.MOLF_CLIENT_DIR]) {
    if (named !== undefined && named !== '' && (await canonical(named)) === legacy) return { type: 'none' };
  }
  const targets: MolfPaths = resolveMolfPaths({
    env: { ...env, MOLF_HOME: undefined, MOLF_CLIENT_DIR: undefined },
    home,
    platform: 'linux',
  });
  // An XDG directory that leads into ~/.molf (a link made by hand) already is the old place.
  for (const dir of [targets.configDir, targets.dataDir, targets.stateDir]) {
    const real = await canonical(dir);
    if (real !== undefined && isWithin(real, legacy)) return { type: 'none' };
  }
  if ((await findPendingEntries(legacyDir, targets)).length === 0) return { type: 'none' };

  const places = `${shown(targets.configDir, home)}, ${shown(targets.dataDir, home)} and ${shown(targets.stateDir, home)}`;
  const users = await findDirectoryUsers(legacy);
  if (users.length > 0) {
    keepLegacyHome(env, legacyDir);
    options.notice(
      `${shown(legacyDir, home)} is in use by ${users.map((user) => describeUser(user, home)).join(', ')}: this run uses it as ` +
        `before; Molf moves it to ${places} at the first start after that has ended`,
    );
    return { type: 'kept', reason: 'in_use', users };
  }
  let release: (() => Promise<void>) | undefined;
  try {
    release = await takeLock(targets.stateDir);
    if (release === undefined) throw new Error('another molf process has been moving it for a minute');
    const migration = await migrateLegacyHome({ legacyDir, targets });
    if (migration.moved.length > 0 || migration.setAside.length > 0) {
      options.notice(
        `moved ${shown(legacyDir, home)} to ${places} (XDG); ${shown(legacyDir, home)} keeps links to the ` +
          'new places for older versions of Molf',
      );
    }
    for (const { from, to, taken } of migration.setAside) {
      options.notice(
        `${shown(from, home)} was not moved over ${shown(taken, home)}, which was there already: it is ` +
          `${shown(to, home)} now; compare the two and keep one`,
      );
    }
    return { type: 'migrated', migration };
  } catch (error) {
    keepLegacyHome(env, legacyDir);
    options.notice(
      `could not move ${shown(legacyDir, home)} to ${places} (${(error as Error).message}): this run uses ` +
        `${shown(legacyDir, home)} as before, and the next start tries again`,
    );
    return { type: 'kept', reason: 'failed', error: error as Error };
  } finally {
    await release?.();
  }
}

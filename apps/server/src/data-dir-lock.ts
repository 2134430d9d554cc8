import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { link, readFile, rename, stat, unlink, utimes, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { MolfError } from '@molf/protocol';
import { z } from 'zod';

/** The file that says which process uses a data directory (state documents skip `.lock` names). */
export const DATA_DIR_LOCK_FILE = 'in-use.lock';

const LockSchema = z.object({
  pid: z.number().int().positive(),
  /** The process's start, in clock ticks after boot (Linux's /proc/{pid}/stat): a reused pid differs. */
  started: z.string().optional(),
  host: z.string(),
  /** What holds it: `molf server`, `molf migrate`. */
  holder: z.string(),
  at: z.string(),
});
type Lock = z.infer<typeof LockSchema>;

/** How often the holder touches its claim, so that a host that cannot look at its process can date it. */
const TOUCH_MS = 10_000;
/** A claim of another host untouched for this long is taken as left by a process that is gone. */
const FOREIGN_STALE_MS = 60_000;

export type DataDirLock = {
  /** Lets the directory go (only this lock: a file another process wrote since is left alone). */
  release(): Promise<void>;
};

/**
 * Marks the data directory as used by this process for as long as it holds it, so that a second
 * server (or a `molf migrate` copying it) on the same directory is refused instead of writing the
 * same files beside the first. A lock whose process is gone (killed, crashed) is taken over at once:
 * the holder is looked up by its pid and start time, not by a timer. A lock from another host
 * (a shared disk) cannot be checked and is refused, with the file to remove if that process is gone.
 */
export async function lockDataDir(
  dataDir: string,
  options: {
    /** What takes it, as the refusal of another names it: `molf server`, `molf migrate`. */
    holder: string;
    /** What the refusal of this one suggests besides stopping the holder. */
    otherwise?: string;
  },
): Promise<DataDirLock> {
  const { holder } = options;
  const path = join(dataDir, DATA_DIR_LOCK_FILE);
  const own: Lock = {
    pid: process.pid,
    ...startOf(process.pid),
    host: hostname(),
    holder,
    at: new Date().toISOString(),
  };
  const text = `${JSON.stringify(own)}\n`;
  // A few rounds: a lock found stale may be replaced by another starter between the look and the take.
  for (let round = 0; round < 3; round += 1) {
    if (await placeWhole(path, text)) {
      const touch = setInterval(() => {
        const now = new Date();
        utimes(path, now, now).catch(() => undefined);
      }, TOUCH_MS);
      touch.unref();
      return {
        async release() {
          clearInterval(touch);
          const now = await readFile(path, 'utf8').catch(() => undefined);
          if (now === text) await unlink(path).catch(() => undefined);
        },
      };
    }
    const found = await readFile(path, 'utf8').catch(() => undefined);
    const touched = await stat(path).then(
      (info) => info.mtimeMs,
      () => undefined,
    );
    if (found === undefined || touched === undefined) continue;
    const lock = parseLock(found);
    if (lock !== undefined && isLive(lock, touched)) {
      throw new MolfError('conflict', inUseMessage(dataDir, path, lock, options.otherwise));
    }
    // Its process is gone (or the file is not one a Molf process wrote whole): taken over, unless
    // another starter took it over first (then the next round finds that one's, live).
    await takeOver(path, found);
  }
  throw new MolfError('conflict', `${dataDir} is being taken by another Molf process: try again`);
}

/**
 * Puts the claim in place whole, or not at all when there is one: written beside it, then linked
 * to its name (a reader never sees it half-written). False when a claim is there.
 */
async function placeWhole(path: string, text: string): Promise<boolean> {
  const draft = `${path}.${randomBytes(6).toString('hex')}`;
  await writeFile(draft, text, { mode: 0o600 });
  try {
    await link(draft, path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    await unlink(draft).catch(() => undefined);
  }
}

/** Removes a stale lock file, if it still holds `found` (moved aside first, so no newer one is removed). */
async function takeOver(path: string, found: string): Promise<void> {
  const aside = `${path}.${process.pid}.stale`;
  try {
    await rename(path, aside);
  } catch {
    return;
  }
  const moved = await readFile(aside, 'utf8').catch(() => undefined);
  if (moved !== found) {
    // Another process's new lock, taken between the look and the move: put back.
    await rename(aside, path).catch(() => undefined);
    return;
  }
  await unlink(aside).catch(() => undefined);
}

function parseLock(text: string): Lock | undefined {
  try {
    const parsed = LockSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether the process that wrote the lock still runs: looked up on this host; another host's is
 * taken for live while it touches its claim.
 */
function isLive(lock: Lock, touchedMs: number): boolean {
  if (lock.host !== hostname()) return Date.now() - touchedMs < FOREIGN_STALE_MS;
  try {
    process.kill(lock.pid, 0);
  } catch (error) {
    // EPERM: it runs, as another user.
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const now = startOf(lock.pid).started;
  return lock.started === undefined || now === undefined || now === lock.started;
}

/** The process's start time after boot, where the system tells it (Linux), to tell a reused pid apart. */
function startOf(pid: number): { started?: string } {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The fields after the command name (in parentheses, which may hold spaces): the 22nd field is the start.
    const started = stat
      .slice(stat.lastIndexOf(')') + 2)
      .split(' ')
      .at(19);
    return started === undefined ? {} : { started };
  } catch {
    return {};
  }
}

function inUseMessage(dataDir: string, path: string, lock: Lock, otherwise: string | undefined): string {
  const here = lock.host === hostname();
  const where = here ? `pid ${lock.pid}` : `pid ${lock.pid} on ${lock.host}`;
  const gone = here ? '' : ` (if it is gone, its claim lapses a minute after it last renewed it, or remove ${path})`;
  return `the data directory ${dataDir} is in use by ${lock.holder} (${where}, since ${lock.at}): stop it first${gone}${otherwise === undefined ? '' : `, or ${otherwise}`}`;
}

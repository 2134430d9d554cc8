import { MolfError } from '@molf/protocol';
import lockfile from 'proper-lockfile';
import { createTurnsByKey } from '../turns-by-key.ts';

/**
 * A lock older than this is taken as left by a process that died holding it (proper-lockfile's
 * own minimum is 5 s). A holder refreshes its lock every half of it, so a live one never looks stale.
 */
const STALE_MS = 10_000;
/** Waits for a lock held by another process: about 20 s in all, enough to outlast a stale one. */
const RETRIES = { retries: 30, factor: 1.5, minTimeout: 20, maxTimeout: 1_000 };

/** Turns within this process, per file: proper-lockfile would make a second one retry on a timer. */
const inTurn = createTurnsByKey();

/**
 * Runs `task` holding the lock of `path` (a `path.lock` directory beside it) against this process
 * and every other Molf process (the server, `molf pair`, `molf token`), so that a read-modify-write
 * of the file sees the last write and loses none. A file locked for longer than about 20 s fails
 * with `busy`, naming the lock.
 */
export function withFileLock<T>(path: string, task: () => Promise<T>): Promise<T> {
  return inTurn(path, () => lockAndRun(path, task));
}

async function lockAndRun<T>(path: string, task: () => Promise<T>): Promise<T> {
  let release: () => Promise<void>;
  try {
    release = await lockfile.lock(path, {
      // The file may not exist yet: lock its name, not its real path.
      realpath: false,
      stale: STALE_MS,
      retries: RETRIES,
      // The default throws from a timer and ends the process. The task is a read and a write of a
      // small file, far shorter than the stale time; a lock taken over meanwhile (the process was
      // frozen for 10 s) loses nothing that an atomic rename does not already protect.
      onCompromised: () => {},
    });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ELOCKED') {
      throw new MolfError(
        'busy',
        `${path} is locked by another Molf process (${path}.lock): try again; if no Molf process runs, remove that directory`,
        { cause: error },
      );
    }
    throw error;
  }
  try {
    return await task();
  } finally {
    await release().catch(() => {
      // Released already (taken over as stale): nothing is left to undo.
    });
  }
}

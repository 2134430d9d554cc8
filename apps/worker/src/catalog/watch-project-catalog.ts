import { type FSWatcher, watch } from 'node:fs';
import { basename, join } from 'node:path';
import { createProblemLog, type Logger } from '@molf/logging';
import type { ProjectCatalog } from '@molf/protocol';
import { createParsedFileCache } from './parsed-file-cache.ts';
import {
  CATALOG_SOURCES,
  type CatalogFileCache,
  type CatalogScan,
  scanProjectCatalog,
} from './scan-project-catalog.ts';

/** The workdir's skills and agents, kept up to date. */
export type CatalogWatcher = {
  /** The latest snapshot. */
  current(): ProjectCatalog;
  /** Scans now (after the scan under way, if any); resolves once the snapshot is up to date. */
  rescan(): Promise<void>;
  /** Stops watching and polling; resolves once a scan under way has ended. */
  close(): Promise<void>;
};

export const DEFAULT_CATALOG_DEBOUNCE_MS = 100;
export const DEFAULT_CATALOG_POLL_MS = 5_000;

/**
 * Scans the workdir's skills and agents, then watches for changes: `fs.watch` (inotify, no extra
 * dependency: the idle worker's memory is measured) on the workdir, `.agents` and `.claude`, their
 * `skills` and `agents` folders and each skill's folder, re-armed after every scan since folders
 * come and go; plus a slow poll, in case an event is missed or a folder can't be watched (ENOSPC
 * when inotify's watches run out). Scans never overlap; a snapshot that differs from the last,
 * version aside, gets the next version and goes to `onChange`. New problems are logged once. A
 * rescan reads again only the files whose stat changed (or that had just changed when last read).
 */
export async function watchProjectCatalog(options: {
  /** The canonical workdir. */
  workdir: string;
  logger: Logger;
  /** Called with each snapshot that differs from the one before (not with the first). */
  onChange: (catalog: ProjectCatalog) => void;
  /** Delay from a change to the scan, so that a burst of events makes one scan. Default 100 ms. */
  debounceMs?: number;
  /** A scan this often even without events. Default 5 s. */
  pollMs?: number;
  /** The clock that tells whether a file had settled when read, so its parse can be kept. Default `Date.now`. */
  now?: () => number;
}): Promise<CatalogWatcher> {
  const { workdir, logger } = options;
  const logProblems = createProblemLog(logger);
  const cache: CatalogFileCache = createParsedFileCache({ now: options.now });
  const first = await scanProjectCatalog(workdir, { cache });
  let catalog: ProjectCatalog = { version: 1, ...withoutDirectories(first) };
  let compared = JSON.stringify(withoutDirectories(first));
  logProblems(catalog.problems);

  /** The file names worth a scan in a folder that holds more than the catalog; absent: every name. */
  const interesting = new Map<string, readonly string[]>([
    [workdir, CATALOG_SOURCES],
    ...CATALOG_SOURCES.map((source) => [join(workdir, source), ['skills', 'agents']] as const),
  ]);
  const watchers = new Map<string, { identity: string; watcher: FSWatcher }>();
  /** Error codes already logged, so a watch limit reached is said once, not at every scan. */
  const watchFailures = new Set<string>();
  let closed = false;
  let debounce: NodeJS.Timeout | undefined;
  let scanning: Promise<void> | undefined;
  let again = false;

  function forget(path: string, watcher: FSWatcher): void {
    watcher.close();
    if (watchers.get(path)?.watcher === watcher) watchers.delete(path);
  }

  function reportWatchFailure(path: string, error: unknown): void {
    const code = (error as NodeJS.ErrnoException).code ?? 'unknown';
    if (watchFailures.has(code)) {
      logger.debug({ err: error, path }, 'cannot watch a skills or agents folder');
      return;
    }
    watchFailures.add(code);
    logger.warn(
      { err: error, path },
      `cannot watch ${path} for skill and agent changes (${code}); ` +
        `changes there are noticed within ${Math.round((options.pollMs ?? DEFAULT_CATALOG_POLL_MS) / 1000)} s instead`,
    );
  }

  /** Whether the folder is watched now. */
  function watchFolder(path: string, identity: string): boolean {
    try {
      const watcher = watch(path, { persistent: false }, (_event, filename) => {
        // Its own name: the folder itself was deleted or renamed, and inotify watches an inode, so
        // this watcher sees nothing more. The next scan opens one on whatever is there then (a
        // folder made again may even get the same inode number).
        if (filename === basename(path)) forget(path, watcher);
        else if (filename !== null && interesting.get(path)?.includes(filename) === false) return;
        schedule();
      });
      watcher.on('error', (error) => {
        // ENOENT and EPERM races: the folder went while being watched. The poll still runs.
        reportWatchFailure(path, error);
        forget(path, watcher);
        schedule();
      });
      watchers.set(path, { identity, watcher });
      return true;
    } catch (error) {
      reportWatchFailure(path, error);
      return false;
    }
  }

  /**
   * Watches the folders of the last scan: new ones and those replaced by another, none that went.
   * Returns whether it began to watch one: what changed in it between the scan and now was seen by
   * nobody, so it takes one more scan.
   */
  function arm(directories: CatalogScan['directories']): boolean {
    for (const [path, entry] of watchers) {
      if (directories.get(path) !== entry.identity) forget(path, entry.watcher);
    }
    let began = false;
    for (const [path, identity] of directories) {
      if (!watchers.has(path) && watchFolder(path, identity)) began = true;
    }
    return began;
  }

  async function scanOnce(): Promise<void> {
    let scan: CatalogScan;
    try {
      scan = await scanProjectCatalog(workdir, { cache });
    } catch (error) {
      logger.warn({ err: error }, 'scanning the skills and agents failed; trying again at the next change');
      return;
    }
    if (closed) return;
    if (arm(scan.directories)) again = true;
    const next = withoutDirectories(scan);
    const key = JSON.stringify(next);
    if (key === compared) return;
    compared = key;
    catalog = { version: catalog.version + 1, ...next };
    logProblems(catalog.problems);
    try {
      options.onChange(catalog);
    } catch (error) {
      logger.error({ err: error }, 'a skills and agents change could not be handled');
    }
  }

  function rescan(): Promise<void> {
    if (closed) return Promise.resolve();
    if (scanning !== undefined) {
      // One more pass after the one under way, which may have read the folders before the change.
      again = true;
      return scanning;
    }
    scanning = (async () => {
      do {
        again = false;
        await scanOnce();
      } while (again && !closed);
    })().finally(() => {
      scanning = undefined;
    });
    return scanning;
  }

  function schedule(): void {
    if (closed || debounce !== undefined) return;
    debounce = setTimeout(() => {
      debounce = undefined;
      void rescan();
    }, options.debounceMs ?? DEFAULT_CATALOG_DEBOUNCE_MS);
    debounce.unref();
  }

  if (arm(first.directories)) void rescan();
  const poll = setInterval(() => void rescan(), options.pollMs ?? DEFAULT_CATALOG_POLL_MS);
  poll.unref();

  return {
    current: () => catalog,
    rescan,
    async close() {
      closed = true;
      clearTimeout(debounce);
      clearInterval(poll);
      for (const [path, entry] of watchers) forget(path, entry.watcher);
      await scanning;
    },
  };
}

function withoutDirectories(scan: CatalogScan): Omit<ProjectCatalog, 'version'> {
  return { skills: scan.skills, agents: scan.agents, problems: scan.problems };
}

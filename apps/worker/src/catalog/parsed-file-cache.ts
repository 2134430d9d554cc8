import type { Stats } from 'node:fs';

/**
 * How long a file must have gone unchanged, when it is read, for its parse to be kept. Its time stamps
 * are as coarse as the file system's (a kernel tick; 1 to 2 s on FAT or HFS+): a file written again
 * within the tick of its last change keeps its stat, size included, and only reading it shows the new
 * text (git's "racy" files). Past this, a change gets a later ctime.
 */
export const DEFAULT_SETTLE_MS = 3_000;

/**
 * What was parsed from each file at its last read, so that a rescan reads again only the files
 * that may have changed. For one scan at a time.
 */
export type ParsedFileCache<T> = {
  /**
   * What `parse` gave at the last read of the file `key` names, when `info` (its stat, taken before
   * reading) is the stat taken then: same device, inode, size, mtime and ctime. Else `parse()`,
   * kept for next time unless it is undefined (a failed read is tried again).
   */
  get(options: { key: string; info: Stats; parse: () => Promise<T | undefined> }): Promise<T | undefined>;
  /** Drops the files not asked for since the last sweep: those gone cost no memory. */
  sweep(): void;
  /** How many files are kept. */
  readonly size: number;
};

export function createParsedFileCache<T>(
  options: {
    /** The clock a file's time stamps are compared with. Default `Date.now`. */
    now?: () => number;
    /** How long a file must have gone unchanged, when read, for its parse to be kept. Default 3 s. */
    settleMs?: number;
  } = {},
): ParsedFileCache<T> {
  const now = options.now ?? Date.now;
  const settleMs = options.settleMs ?? DEFAULT_SETTLE_MS;
  const entries = new Map<string, { stamp: string; value: T }>();
  const asked = new Set<string>();
  return {
    async get({ key, info, parse }) {
      asked.add(key);
      const stamp = `${info.dev}:${info.ino}:${info.size}:${info.mtimeMs}:${info.ctimeMs}`;
      const entry = entries.get(key);
      if (entry?.stamp === stamp) return entry.value;
      // Judged before reading: a write after the read then gets a later time stamp than `info`'s.
      const settled = now() - Math.max(info.mtimeMs, info.ctimeMs) >= settleMs;
      const value = await parse();
      if (value !== undefined && settled) entries.set(key, { stamp, value });
      else entries.delete(key);
      return value;
    },
    sweep() {
      for (const key of entries.keys()) if (!asked.has(key)) entries.delete(key);
      asked.clear();
    },
    get size() {
      return entries.size;
    },
  };
}

import type { Stats } from 'node:fs';
import { type ToolResult, toErrorResult } from '@molf/protocol';

/** Files remembered per session; the oldest are forgotten beyond this. */
const MAX_FILES_PER_SESSION = 10_000;

type Seen = { mtimeMs: number; size: number };

/**
 * What each session last saw of each file, so an edit or overwrite can be refused when the file
 * changed on disk since (someone else edited it) or, if the worker requires it, when the session
 * never read it. In memory, per worker process.
 */
export type ReadTracker = {
  /** After a read, or after this session's own write: the session knows this version. */
  remember(sessionId: string | undefined, path: string, stats: Stats): void;
  /** Before changing an existing file: a failure to return, or undefined to go ahead. */
  checkBeforeChange(
    sessionId: string | undefined,
    path: string,
    shownPath: string,
    stats: Stats,
  ): ToolResult | undefined;
};

export function createReadTracker(options: { requireRead?: boolean } = {}): ReadTracker {
  const sessions = new Map<string, Map<string, Seen>>();
  const keyOf = (sessionId: string | undefined) => sessionId ?? '';

  return {
    remember(sessionId, path, stats) {
      const key = keyOf(sessionId);
      let files = sessions.get(key);
      if (files === undefined) {
        files = new Map();
        sessions.set(key, files);
      }
      files.delete(path);
      files.set(path, { mtimeMs: stats.mtimeMs, size: stats.size });
      if (files.size > MAX_FILES_PER_SESSION) files.delete(files.keys().next().value as string);
    },
    checkBeforeChange(sessionId, path, shownPath, stats) {
      const seen = sessions.get(keyOf(sessionId))?.get(path);
      if (seen === undefined) {
        return options.requireRead === true
          ? toErrorResult('read_required', `Read ${shownPath} with read_file before changing it.`)
          : undefined;
      }
      if (seen.mtimeMs !== stats.mtimeMs || seen.size !== stats.size) {
        return toErrorResult(
          'stale_file',
          `${shownPath} changed on disk since you last read it. Read it again with read_file, then make your change.`,
        );
      }
      return undefined;
    },
  };
}

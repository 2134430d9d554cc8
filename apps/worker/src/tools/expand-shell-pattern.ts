import { lstat, opendir } from 'node:fs/promises';
import { isAbsolute, join, resolve } from 'node:path';
import picomatch from 'picomatch';

/** A pattern naming more files than this is not expanded: the gate then asks. */
export const MAX_PATTERN_MATCHES = 1_000;
/** Directory entries a pattern's expansion reads at most; past them it is not expanded either. */
export const MAX_PATTERN_ENTRIES = 10_000;

/** A glob character bash expands: `*`, `?`, `[`. */
const GLOB_CHAR = /[*?[]/;

/** Thrown inside the walk when a bound is reached. */
class TooLarge extends Error {}

async function exists(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * The files a shell glob names, as bash expands it without options: `*` never crosses `/` and
 * `**` is `*` (no globstar), names starting with `.` only when the pattern's segment does, and a
 * pattern that matches nothing stays as written. Absolute paths.
 *
 * Bounded: the walk stops as soon as it has more than MAX_PATTERN_MATCHES names (in all, or
 * candidates for a directory segment) or has read MAX_PATTERN_ENTRIES directory entries, and then
 * answers undefined: the pattern is not fully expanded, and the caller must not take the names it
 * has for all of them (the gate asks).
 */
export async function expandShellPattern(options: { pattern: string; cwd: string }): Promise<string[] | undefined> {
  const absolute = isAbsolute(options.pattern);
  const segments = options.pattern.split('/').filter((segment, index) => segment !== '' || index === 0);
  // The fixed directories before the first segment with a glob character are where the search starts.
  const first = segments.findIndex((segment) => GLOB_CHAR.test(segment));
  if (first === -1) return [resolve(options.cwd, options.pattern)];
  const base = resolve(
    options.cwd,
    absolute ? `/${segments.slice(0, first).join('/')}` : segments.slice(0, first).join('/') || '.',
  );
  const rest = segments.slice(first);
  let entriesRead = 0;

  /** The entries of `directory` that `matches` accepts; links are names too (bash lists them). */
  const matchingEntries = async (directory: string, matches: (name: string) => boolean): Promise<string[]> => {
    const found: string[] = [];
    let handle: Awaited<ReturnType<typeof opendir>>;
    try {
      handle = await opendir(directory);
    } catch {
      // Not a directory, gone or unreadable: bash finds nothing there either.
      return found;
    }
    // Breaking out of the loop (or a throw in it) closes the directory.
    for await (const entry of handle) {
      entriesRead += 1;
      if (entriesRead > MAX_PATTERN_ENTRIES) throw new TooLarge();
      if (matches(entry.name)) found.push(join(directory, entry.name));
    }
    return found;
  };

  let candidates = [base];
  try {
    for (const segment of rest) {
      const next: string[] = [];
      if (GLOB_CHAR.test(segment)) {
        // One segment at a time, as bash does: `*` stays within it, a leading `.` must be written.
        const matches = picomatch(segment.replaceAll('**', '*'), { dot: false, nonegate: true });
        for (const candidate of candidates) {
          // Descending follows links to directories, as bash does.
          for (const path of await matchingEntries(candidate, matches)) {
            next.push(path);
            if (next.length > MAX_PATTERN_MATCHES) throw new TooLarge();
          }
        }
      } else {
        // A fixed segment after a glob: kept where it exists.
        for (const candidate of candidates) {
          const path = join(candidate, segment);
          if (await exists(path)) next.push(path);
        }
      }
      candidates = next;
      if (candidates.length === 0) break;
    }
  } catch (error) {
    if (error instanceof TooLarge) return undefined;
    throw error;
  }
  if (candidates.length === 0) return [resolve(options.cwd, options.pattern)];
  return candidates;
}

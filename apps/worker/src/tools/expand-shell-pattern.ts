import { isAbsolute, join, resolve } from 'node:path';
import { glob } from 'tinyglobby';

/** A pattern naming more files than this is not expanded: the gate then asks. */
export const MAX_PATTERN_MATCHES = 1_000;

/** A glob character bash expands: `*`, `?`, `[`. */
const GLOB_CHAR = /[*?[]/;

/**
 * The files a shell glob names, as bash expands it without options: `*` never crosses `/` and
 * `**` is `*` (no globstar), names starting with `.` only when the pattern's segment does, and a
 * pattern that matches nothing stays as written. Absolute paths, or undefined when the pattern names
 * more than MAX_PATTERN_MATCHES files.
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
  const rest = segments
    .slice(first)
    .map((segment) => segment.replaceAll('**', '*'))
    .join('/');
  const matches = await glob(rest, {
    cwd: base,
    dot: false,
    onlyFiles: false,
    expandDirectories: false,
    // Links are names too (bash lists them); the depth stays that of the pattern (no `**`).
    followSymbolicLinks: true,
    absolute: false,
  });
  if (matches.length > MAX_PATTERN_MATCHES) return undefined;
  if (matches.length === 0) return [resolve(options.cwd, options.pattern)];
  // tinyglobby ends a directory's name with a `/`.
  return matches.map((match) => join(base, match.replace(/\/$/, '')));
}

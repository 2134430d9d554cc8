import { open, stat } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, sep } from 'node:path';
import type { Ignore } from 'ignore';
import picomatch from 'picomatch';
import { NO_WAIT_READ_FLAG } from './no-wait-read-flag.ts';

/**
 * Why a glob pattern could reach outside the directory it is applied to (absolute, or a `..`
 * segment), or undefined when it can't. Walking follows patterns literally, so this is checked
 * before any walk.
 */
export function patternEscape(pattern: string): string | undefined {
  if (isAbsolute(pattern) || pattern.startsWith('~')) {
    return `The pattern "${pattern}" is absolute; patterns are relative to the searched directory (use path to pick it).`;
  }
  if (pattern.split(/[\\/]/).includes('..')) {
    return `The pattern "${pattern}" contains "..", which would leave the searched directory; use path instead.`;
  }
  return undefined;
}

/** Runs `task` over `items` with at most `limit` at a time; results in input order. */
export async function mapWithLimit<T, R>(
  items: readonly T[],
  limit: number,
  task: (item: T) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await task(items[index] as T);
    }
  });
  await Promise.all(workers);
  return results;
}

/** Largest .gitignore read: 1 MiB (tens of thousands of rules); a larger one is skipped. */
const MAX_IGNORE_FILE_BYTES = 1024 * 1024;

/**
 * A .gitignore's rules; undefined when there is none, or it is no regular file or too large.
 * Opened without waiting and checked on the open handle: opening a FIFO for reading the usual
 * way waits for a writer forever, holding one of libuv's few threads.
 */
async function loadIgnore(file: string): Promise<Ignore | undefined> {
  // Imported at the first walk, like tinyglobby below: an idle worker never needs either.
  const { default: ignore } = await import('ignore');
  const handle = await open(file, NO_WAIT_READ_FLAG).catch(() => undefined);
  if (handle === undefined) return undefined;
  try {
    const info = await handle.stat();
    if (!info.isFile() || info.size > MAX_IGNORE_FILE_BYTES) return undefined;
    return ignore().add(await handle.readFile('utf8'));
  } catch {
    return undefined;
  } finally {
    await handle.close();
  }
}

/**
 * Files under `root` matching `patterns` (tinyglobby), dotfiles included, never inside `.git`,
 * minus what .gitignore files ignore: the ones in `root` and below, and the ones in its ancestors
 * up to `workdir`. Paths are absolute.
 */
export async function listFiles(options: { root: string; workdir: string; patterns: string[] }): Promise<string[]> {
  const { glob } = await import('tinyglobby');
  // One walk for both the matches and the .gitignore files: walking is the whole cost here.
  const found = await glob([...options.patterns, '**/.gitignore'], {
    cwd: options.root,
    dot: true,
    onlyFiles: true,
    absolute: true,
    followSymbolicLinks: false,
    ignore: ['**/.git/**'],
    expandDirectories: false,
  });
  // Belt and braces: nothing outside the root, whatever the pattern did.
  const inside = found.filter((file) => file.startsWith(options.root + sep));
  const nestedIgnores = inside.filter((file) => basename(file) === '.gitignore');
  // A .gitignore is a match only if the caller's patterns match it too.
  const isRequested = picomatch(options.patterns, { dot: true });
  const matches =
    nestedIgnores.length === 0
      ? inside
      : inside.filter(
          (file) => basename(file) !== '.gitignore' || isRequested(relative(options.root, file).split(sep).join('/')),
        );
  const ignoreFiles = new Set(nestedIgnores);
  for (let dir = options.root; ; dir = dirname(dir)) {
    ignoreFiles.add(join(dir, '.gitignore'));
    if (dir === options.workdir || dirname(dir) === dir || relative(options.workdir, dir).startsWith('..')) break;
  }
  const rules = (
    await Promise.all([...ignoreFiles].map(async (file) => ({ dir: dirname(file), rules: await loadIgnore(file) })))
  ).filter((entry): entry is { dir: string; rules: Ignore } => entry.rules !== undefined);
  if (rules.length === 0) return matches;
  return matches.filter(
    (file) =>
      !rules.some(({ dir, rules: ruleSet }) => {
        if (!file.startsWith(dir + sep)) return false;
        return ruleSet.ignores(relative(dir, file).split(sep).join('/'));
      }),
  );
}

/** Modification times of `files`, stat'ed 64 at a time; a file that vanished meanwhile gets 0. */
export function modificationTimes(files: readonly string[]): Promise<number[]> {
  return mapWithLimit(files, 64, async (file) => (await stat(file).catch(() => undefined))?.mtimeMs ?? 0);
}

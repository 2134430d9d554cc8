import { readdir, readFile, readlink } from 'node:fs/promises';
import { join } from 'node:path';

/** A process that has a file of a directory open, or names the directory on its command line. */
export type DirectoryUser = { pid: number; argv: string[] };

/** Whether `text` names `dir` or a path below it (not a sibling such as `dir-old`). */
function names(text: string, dir: string): boolean {
  let from = text.indexOf(dir);
  while (from !== -1) {
    const before = from === 0 ? '' : text[from - 1];
    const after = text[from + dir.length];
    if ((before === '' || before === '=') && (after === undefined || after === '/')) return true;
    from = text.indexOf(dir, from + 1);
  }
  return false;
}

/** The process's arguments when it uses `dir`, else undefined. */
async function usesDirectory(procDir: string, dir: string): Promise<string[] | undefined> {
  const argv = (await readFile(join(procDir, 'cmdline'), 'utf8')).split('\0').filter(Boolean);
  if (argv.some((arg) => names(arg, dir))) return argv;
  for (const fd of await readdir(join(procDir, 'fd'))) {
    const target = await readlink(join(procDir, 'fd', fd)).catch(() => '');
    if (names(target, dir)) return argv;
  }
  return undefined;
}

/**
 * The other processes using `dir` (its real path), found in `/proc` (Linux): those with a file
 * below it open (a server's log, a session being written) or naming it on their command line (a
 * `molf server --data-dir ~/.molf` that `molf up` started). Processes this user may not inspect, and
 * every process on a system without `/proc`, are not seen: the caller treats an empty list as
 * "probably nobody", not as proof.
 */
export async function findDirectoryUsers(
  dir: string,
  options: { procRoot?: string; ownPid?: number } = {},
): Promise<DirectoryUser[]> {
  const procRoot = options.procRoot ?? '/proc';
  const ownPid = options.ownPid ?? process.pid;
  let entries: string[];
  try {
    entries = await readdir(procRoot);
  } catch {
    return [];
  }
  const users: DirectoryUser[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry) || Number(entry) === ownPid) continue;
    try {
      const argv = await usesDirectory(join(procRoot, entry), dir);
      if (argv !== undefined) users.push({ pid: Number(entry), argv });
    } catch {
      // Gone meanwhile, or not ours to inspect.
    }
  }
  return users;
}

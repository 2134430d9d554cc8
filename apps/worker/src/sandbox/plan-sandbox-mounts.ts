import { realpath, stat } from 'node:fs/promises';
import { isAbsolute, join, relative, sep } from 'node:path';
import type { SandboxMount } from './bwrap-arguments.ts';
import { planGitMounts } from './plan-git-mounts.ts';
import type { SandboxSettings } from './sandbox-config.ts';

function isInside(parent: string, child: string): boolean {
  const path = relative(parent, child);
  return path === '' || (!path.startsWith('..') && !isAbsolute(path));
}

/** The directories strictly between `root` and `path` (which is inside it), outermost first. */
function directoriesBetween(root: string, path: string): string[] {
  const names = relative(root, path).split(sep).slice(0, -1);
  return names.map((_name, index) => join(root, ...names.slice(0, index + 1)));
}

/** The canonical path and whether it is a directory, or undefined when it does not exist (now). */
async function inspect(path: string): Promise<{ path: string; directory: boolean } | undefined> {
  try {
    const canonical = await realpath(path);
    return { path: canonical, directory: (await stat(canonical)).isDirectory() };
  } catch {
    return undefined;
  }
}

const RANK: Record<SandboxMount['type'], number> = {
  writable: 0,
  pinned: 0,
  'read-only': 1,
  'hidden-directory': 2,
  'hidden-file': 2,
};

/**
 * The mounts of a policy for the paths that exist right now, canonical (a mount lands on what a
 * symlink leads to, so a hidden link hides its target), parents before children so that a hidden
 * file inside the workdir and the workdir inside a hidden directory both come out right; for the
 * same path, hiding wins. Paths that do not exist are skipped: bwrap would have to create them on
 * the read-only root. Called at every spawn (a few stat calls), so a path created later is covered.
 *
 * The workdir's git directory is protected as planGitMounts says, and every directory between a
 * writable root and a mount inside it is pinned (a mount point of its own): renaming the parent of
 * a mount point is allowed, and `mv .git .git.old && mkdir -p .git/hooks` would otherwise leave the
 * read-only hooks behind. A command that runs while another starts cannot swap such a directory
 * either, since it is a mount point in that command's sandbox too.
 */
export async function planSandboxMounts(
  settings: Pick<SandboxSettings, 'workdir' | 'writable' | 'readOnly' | 'hidden'>,
): Promise<SandboxMount[]> {
  const workdir = await realpath(settings.workdir).catch(() => settings.workdir);
  const git = await planGitMounts(workdir);
  // A writable path inside the workdir is writable already, and a command could have made it a
  // link to any directory, which would then be bound read-write.
  const extraWritable = settings.writable.filter(
    (path) => !isInside(settings.workdir, path) && !isInside(workdir, path),
  );
  const [writable, readOnly, hidden] = await Promise.all(
    [[settings.workdir, ...extraWritable], [...settings.readOnly, ...git.readOnly], settings.hidden].map((paths) =>
      Promise.all(paths.map(inspect)),
    ),
  );
  const mounts: SandboxMount[] = [];
  /** What is mounted again (read-write or read-only): under /tmp only these need hiding inside. */
  const writableRoots: string[] = [];
  /** Bound read-write by path: directories inside them need pinning. */
  const readWriteRoots: string[] = [];
  for (const found of writable ?? []) {
    if (found === undefined) continue;
    writableRoots.push(found.path);
    readWriteRoots.push(found.path);
    mounts.push({ type: 'writable', path: found.path });
  }
  for (const found of readOnly ?? []) {
    if (found === undefined) continue;
    writableRoots.push(found.path);
    mounts.push({ type: 'read-only', path: found.path });
  }
  for (const found of hidden ?? []) {
    if (found === undefined) continue;
    // The private /tmp already hides the host's /tmp, except what is mounted into it again.
    if (isInside('/tmp', found.path) && !writableRoots.some((root) => isInside(root, found.path))) continue;
    mounts.push({ type: found.directory ? 'hidden-directory' : 'hidden-file', path: found.path });
  }
  for (const path of git.pinned) mounts.push({ type: 'pinned', path });
  // Every directory between a read-write root and a mount inside it (the innermost root that holds it).
  for (const mount of [...mounts]) {
    if (mount.type === 'writable') continue;
    const root = readWriteRoots
      .filter((candidate) => candidate !== mount.path && isInside(candidate, mount.path))
      .sort((a, b) => b.length - a.length)[0];
    if (root === undefined) continue;
    for (const path of directoriesBetween(root, mount.path)) mounts.push({ type: 'pinned', path });
  }
  const depth = (path: string) => (path === sep ? 0 : path.split(sep).length);
  const boundReadWrite = new Set(readWriteRoots);
  const unique = [...new Map(mounts.map((mount) => [`${mount.type}\0${mount.path}`, mount])).values()].filter(
    // A read-write root is a mount point already.
    (mount) => mount.type !== 'pinned' || !boundReadWrite.has(mount.path),
  );
  // Paths of the same depth are disjoint, so any order among them will do; sorted by name for
  // a stable argument list.
  return unique.sort(
    (a, b) =>
      depth(a.path) - depth(b.path) || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0) || RANK[a.type] - RANK[b.type],
  );
}

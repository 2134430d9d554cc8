import { realpath, stat } from 'node:fs/promises';
import { isAbsolute, relative, sep } from 'node:path';
import type { SandboxMount } from './bwrap-arguments.ts';
import type { SandboxSettings } from './sandbox-config.ts';

function isInside(parent: string, child: string): boolean {
  const path = relative(parent, child);
  return path === '' || (!path.startsWith('..') && !isAbsolute(path));
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
 */
export async function planSandboxMounts(
  settings: Pick<SandboxSettings, 'workdir' | 'writable' | 'readOnly' | 'hidden'>,
): Promise<SandboxMount[]> {
  const [writable, readOnly, hidden] = await Promise.all(
    [[settings.workdir, ...settings.writable], settings.readOnly, settings.hidden].map((paths) =>
      Promise.all(paths.map(inspect)),
    ),
  );
  const mounts: SandboxMount[] = [];
  /** What is mounted again (read-write or read-only): under /tmp only these need hiding inside. */
  const writableRoots: string[] = [];
  for (const found of writable ?? []) {
    if (found === undefined) continue;
    writableRoots.push(found.path);
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
  const depth = (path: string) => (path === sep ? 0 : path.split(sep).length);
  const unique = [...new Map(mounts.map((mount) => [`${mount.type}\0${mount.path}`, mount])).values()];
  // Paths of the same depth are disjoint, so any order among them will do; sorted by name for
  // a stable argument list.
  return unique.sort(
    (a, b) =>
      depth(a.path) - depth(b.path) || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0) || RANK[a.type] - RANK[b.type],
  );
}

import type { Stats } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import { isInside } from '../tools/resolve-tool-path.ts';

/** Where a path of the catalog really leads, and whether that is inside the workdir. */
export type Location =
  | { type: 'missing' }
  | { type: 'inside'; canonical: string; info: Stats }
  | { type: 'outside'; canonical: string }
  | { type: 'unreadable'; message: string };

/**
 * Follows every symlink of `path` and checks that it stays in the (canonical) workdir: a skill or
 * agent linked from elsewhere on the machine would let a project read files it doesn't hold.
 */
export async function locateInWorkdir(workdir: string, path: string): Promise<Location> {
  try {
    const canonical = await realpath(path);
    if (!isInside(canonical, workdir)) return { type: 'outside', canonical };
    return { type: 'inside', canonical, info: await stat(canonical) };
  } catch (error) {
    // A dangling link is as good as absent: it is what a half-done rename looks like.
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { type: 'missing' };
    return { type: 'unreadable', message: (error as Error).message };
  }
}

import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { cp, lstat, mkdir, readdir, readlink, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';

/** Whether something (a file, a directory, a link, even a dangling one) is at `path`. */
export async function exists(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}

async function sha256(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** The first difference between two trees (type, permission bits, link target, bytes, names), or undefined when they are the same. */
async function differenceBetween(original: string, copy: string): Promise<string | undefined> {
  const [a, b] = await Promise.all([lstat(original), lstat(copy)]);
  const kind = (stats: typeof a) =>
    stats.isDirectory() ? 'directory' : stats.isSymbolicLink() ? 'link' : stats.isFile() ? 'file' : 'special';
  if (kind(a) !== kind(b)) return `${copy} is a ${kind(b)}, ${original} a ${kind(a)}`;
  if ((a.mode & 0o7777) !== (b.mode & 0o7777)) {
    return `${copy} has mode ${(b.mode & 0o7777).toString(8)}, not ${(a.mode & 0o7777).toString(8)}`;
  }
  if (a.isSymbolicLink()) {
    return (await readlink(original)) === (await readlink(copy)) ? undefined : `${copy} links elsewhere`;
  }
  if (a.isFile()) {
    if (a.size !== b.size || (await sha256(original)) !== (await sha256(copy)))
      return `${copy} differs from ${original}`;
    return undefined;
  }
  if (!a.isDirectory()) return undefined;
  const [names, copied] = await Promise.all([readdir(original), readdir(copy)]);
  if (names.sort().join('\0') !== copied.sort().join('\0')) return `${copy} does not hold what ${original} holds`;
  for (const name of names) {
    const difference = await differenceBetween(join(original, name), join(copy, name));
    if (difference !== undefined) return difference;
  }
  return undefined;
}

/**
 * Moves `from` to `to`, which must not exist (its parent is made, 0700). On one file system that is
 * a rename; across file systems the tree is copied beside `to` under a temporary name, compared with
 * the original (names, permission bits, link targets, every byte), renamed into place, and only then
 * is the original removed. A failure removes the partial copy and leaves the original as it was.
 */
export async function moveEntry(from: string, to: string): Promise<void> {
  await mkdir(dirname(to), { recursive: true, mode: 0o700 });
  try {
    await rename(from, to);
    return;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
  }
  const staging = `${to}.molf-moving-${process.pid}`;
  await rm(staging, { recursive: true, force: true });
  try {
    await cp(from, staging, {
      recursive: true,
      errorOnExist: true,
      force: false,
      preserveTimestamps: true,
      verbatimSymlinks: true,
    });
    const difference = await differenceBetween(from, staging);
    if (difference !== undefined) throw new Error(`the copy of ${from} is not faithful: ${difference}`);
    if (await exists(to)) throw new Error(`${to} appeared while ${from} was being copied there`);
    await rename(staging, to);
  } catch (error) {
    await rm(staging, { recursive: true, force: true });
    throw error;
  }
  await rm(from, { recursive: true, force: true });
}

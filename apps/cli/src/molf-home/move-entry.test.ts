import { execFileSync } from 'node:child_process';
import { statSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, readlink, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { moveEntry } from './move-entry.ts';

const made: string[] = [];
afterEach(async () => {
  for (const dir of made.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function tempDir(base: string): Promise<string> {
  const dir = await mkdtemp(join(base, 'molf-move-'));
  made.push(dir);
  return dir;
}

/** A second file system for the copy path: /dev/shm is a tmpfs on Linux; the tests need it on another device than the temp dir. */
const otherDevice = (() => {
  try {
    return statSync('/dev/shm').dev !== statSync(tmpdir()).dev ? '/dev/shm' : undefined;
  } catch {
    return undefined;
  }
})();
if (otherDevice === undefined)
  process.stderr.write('SKIPPED moving across file systems: /dev/shm is not another device\n');

/** A tree like a data dir: a 0600 file in a 0700 directory, a plain file, a link. */
async function makeTree(root: string): Promise<string> {
  const tree = join(root, 'data');
  await mkdir(join(tree, 'secrets'), { recursive: true, mode: 0o700 });
  await writeFile(join(tree, 'secrets', 'link-key'), 'k'.repeat(32), { mode: 0o600 });
  await writeFile(join(tree, 'notes.txt'), 'x'.repeat(100_000));
  await symlink('notes.txt', join(tree, 'latest'));
  return tree;
}

describe('moving an entry', () => {
  it('renames within one file system', async () => {
    const root = await tempDir(tmpdir());
    const tree = await makeTree(root);
    await moveEntry(tree, join(root, 'new', 'place'));
    expect(await readdir(root)).toEqual(['new']);
    expect(await readFile(join(root, 'new', 'place', 'secrets', 'link-key'), 'utf8')).toBe('k'.repeat(32));
  });

  it.skipIf(otherDevice === undefined)(
    'copies across file systems, compares, and removes the original only then, keeping modes and links',
    async () => {
      const from = await tempDir(tmpdir());
      const to = await tempDir(otherDevice as string);
      const tree = await makeTree(from);
      const target = join(to, 'share', 'molf');
      await moveEntry(tree, target);
      expect(await readdir(from)).toEqual([]);
      expect((await readdir(target)).sort()).toEqual(['latest', 'notes.txt', 'secrets']);
      expect(((await stat(join(target, 'secrets'))).mode & 0o777).toString(8)).toBe('700');
      expect(((await stat(join(target, 'secrets', 'link-key'))).mode & 0o777).toString(8)).toBe('600');
      expect(await readFile(join(target, 'notes.txt'), 'utf8')).toBe('x'.repeat(100_000));
      expect(await readlink(join(target, 'latest'))).toBe('notes.txt');
      // No staging copy is left beside it.
      expect(await readdir(join(to, 'share'))).toEqual(['molf']);
    },
  );

  it.skipIf(otherDevice === undefined)(
    'leaves the original as it was, and no partial copy, when the copy fails',
    async () => {
      const from = await tempDir(tmpdir());
      const to = await tempDir(otherDevice as string);
      const tree = await makeTree(from);
      // A FIFO cannot be copied.
      execFileSync('mkfifo', [join(tree, 'pipe')]);
      await expect(moveEntry(tree, join(to, 'molf'))).rejects.toThrow();
      expect((await readdir(tree)).sort()).toEqual(['latest', 'notes.txt', 'pipe', 'secrets']);
      expect(await readFile(join(tree, 'secrets', 'link-key'), 'utf8')).toBe('k'.repeat(32));
      expect(await readdir(to)).toEqual([]);
    },
  );
});

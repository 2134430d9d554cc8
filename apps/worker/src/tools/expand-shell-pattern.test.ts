import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { expandShellPattern, MAX_PATTERN_ENTRIES, MAX_PATTERN_MATCHES } from './expand-shell-pattern.ts';
import { createPathPolicy, resolvePathsForGate } from './resolve-tool-path.ts';

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function project(files: string[]): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'molf-pattern-'));
  dirs.push(dir);
  for (const file of files) {
    await mkdir(join(dir, file, '..'), { recursive: true });
    await writeFile(join(dir, file), 'x');
  }
  return dir;
}

describe('expandShellPattern: the files a glob names, as bash expands it', () => {
  it('leaves out dotfiles unless the pattern asks for them, and never crosses a / with *', async () => {
    const cwd = await project(['a.ts', '.env', 'src/b.ts', 'src/deep/c.ts']);
    expect((await expandShellPattern({ pattern: '*', cwd }))?.sort()).toEqual([join(cwd, 'a.ts'), join(cwd, 'src')]);
    expect(await expandShellPattern({ pattern: '.e*', cwd })).toEqual([join(cwd, '.env')]);
    expect(await expandShellPattern({ pattern: 'src/*.ts', cwd })).toEqual([join(cwd, 'src/b.ts')]);
    // Without globstar, ** is *: one level only.
    expect(await expandShellPattern({ pattern: 'src/**/*.ts', cwd })).toEqual([join(cwd, 'src/deep/c.ts')]);
  });

  it('keeps a pattern that matches nothing as written, like bash without nullglob', async () => {
    const cwd = await project(['a.ts']);
    expect(await expandShellPattern({ pattern: '*.md', cwd })).toEqual([join(cwd, '*.md')]);
  });

  it(`gives up past ${MAX_PATTERN_MATCHES} files`, async () => {
    const cwd = await project(Array.from({ length: MAX_PATTERN_MATCHES + 1 }, (_value, index) => `f${index}.txt`));
    expect(await expandShellPattern({ pattern: '*.txt', cwd })).toBeUndefined();
    // The same across directories: the matches of every directory count together.
    const spread = await project(
      Array.from({ length: MAX_PATTERN_MATCHES + 1 }, (_value, index) => `d${index % 4}/f${index}.txt`),
    );
    expect(await expandShellPattern({ pattern: '*/*.txt', cwd: spread })).toBeUndefined();
  });

  it(`gives up after reading ${MAX_PATTERN_ENTRIES} directory entries, however few of them match`, async () => {
    const names = Array.from({ length: MAX_PATTERN_ENTRIES + 1 }, (_value, index) => `f${index}.log`);
    const cwd = await project(['wanted.txt']);
    const crowded = join(cwd, 'crowded');
    await mkdir(crowded);
    for (let start = 0; start < names.length; start += 500) {
      await Promise.all(names.slice(start, start + 500).map((name) => writeFile(join(crowded, name), '')));
    }
    expect(await expandShellPattern({ pattern: 'crowded/*.txt', cwd })).toBeUndefined();
    // Under the bound the same kind of pattern is expanded.
    expect(await expandShellPattern({ pattern: 'w*.txt', cwd })).toEqual([join(cwd, 'wanted.txt')]);
  });

  it('expands a glob in a directory segment, and keeps fixed segments after it', async () => {
    const cwd = await project(['a/x/f.ts', 'b/x/f.ts', 'b/y/f.ts', '.hidden/x/f.ts']);
    expect((await expandShellPattern({ pattern: '*/x/f.ts', cwd }))?.sort()).toEqual([
      join(cwd, 'a/x/f.ts'),
      join(cwd, 'b/x/f.ts'),
    ]);
    expect((await expandShellPattern({ pattern: 'b/[xy]/*', cwd }))?.sort()).toEqual([
      join(cwd, 'b/x/f.ts'),
      join(cwd, 'b/y/f.ts'),
    ]);
    expect((await expandShellPattern({ pattern: `${cwd}/?/x/f.ts`, cwd: '/' }))?.sort()).toEqual([
      join(cwd, 'a/x/f.ts'),
      join(cwd, 'b/x/f.ts'),
    ]);
  });
});

describe('resolvePathsForGate with patterns', () => {
  it('answers a pattern with the canonical forms of every file it names, links followed', async () => {
    const workdir = await project(['.env', 'notes.txt']);
    await symlink('.env', join(workdir, 'innocent.txt'));
    const policy = await createPathPolicy({ workdir });
    const result = await resolvePathsForGate(policy, { paths: ['notes.txt'], patterns: ['inn*', '.e*'] });
    expect(result).toEqual({
      paths: [
        { given: 'notes.txt', forms: ['notes.txt', join(workdir, 'notes.txt')] },
        { given: 'inn*', forms: ['.env', join(workdir, '.env')] },
        { given: '.e*', forms: ['.env', join(workdir, '.env')] },
      ],
    });
  });

  it('answers no forms for a pattern that names too many files, so the gate asks', async () => {
    const workdir = await project(Array.from({ length: MAX_PATTERN_MATCHES + 1 }, (_value, index) => `f${index}.txt`));
    const result = await resolvePathsForGate(await createPathPolicy({ workdir }), { paths: [], patterns: ['*.txt'] });
    expect(result).toEqual({ paths: [{ given: '*.txt', forms: [] }] });
  });
});

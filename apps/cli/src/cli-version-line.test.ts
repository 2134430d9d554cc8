import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleIsFresh } from '@molf/cli/bundle-is-fresh';
import { afterEach, describe, expect, it } from 'vitest';
import { readBuildCommit } from './build-commit.ts';
import { spawnMolf, stopSpawnedProcesses } from './testing/cli-test-kit.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const MAIN = fileURLToPath(new URL('./main.ts', import.meta.url));
const VERSION_LINE = /^molf 0\.1\.0 \(([0-9a-f]{7,})(-dirty)?, (\d{4}-\d\d-\d\d)\)$/;

const directories: string[] = [];
afterEach(async () => {
  await stopSpawnedProcesses();
  for (const directory of directories.splice(0)) await rm(directory, { recursive: true, force: true });
});

async function tempDir(): Promise<string> {
  const directory = await realpath(await mkdtemp(join(tmpdir(), 'molf-version-')));
  directories.push(directory);
  return directory;
}

const GIT_ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: 'Molf Test',
  GIT_AUTHOR_EMAIL: 'test@molf.invalid',
  GIT_COMMITTER_NAME: 'Molf Test',
  GIT_COMMITTER_EMAIL: 'test@molf.invalid',
  GIT_COMMITTER_DATE: '2026-01-02T03:04:05Z',
  GIT_AUTHOR_DATE: '2026-01-02T03:04:05Z',
};

function git(cwd: string, args: string[]): string {
  return execFileSync('git', args, { cwd, env: GIT_ENV, encoding: 'utf8' }).trim();
}

/** A git repository with one commit of `tracked.txt`. */
async function repository(): Promise<string> {
  const directory = await tempDir();
  git(directory, ['init', '--quiet']);
  await writeFile(join(directory, 'tracked.txt'), 'one\n');
  git(directory, ['add', 'tracked.txt']);
  git(directory, ['commit', '--quiet', '-m', 'first']);
  return directory;
}

describe('the commit of a build', () => {
  it('is the short hash and the commit date of a clean checkout', async () => {
    const directory = await repository();
    expect(readBuildCommit({ root: directory })).toBe(
      `${git(directory, ['rev-parse', '--short', 'HEAD'])}, 2026-01-02`,
    );
  });

  it('is marked -dirty when a tracked file changed, not for an untracked file', async () => {
    const directory = await repository();
    const hash = git(directory, ['rev-parse', '--short', 'HEAD']);
    await writeFile(join(directory, 'untracked.txt'), 'new\n');
    expect(readBuildCommit({ root: directory })).toBe(`${hash}, 2026-01-02`);
    await writeFile(join(directory, 'tracked.txt'), 'two\n');
    expect(readBuildCommit({ root: directory })).toBe(`${hash}-dirty, 2026-01-02`);
  });

  it('is unknown outside a git checkout, inside another repository, or without git', async () => {
    expect(readBuildCommit({ root: await tempDir() })).toBe('unknown');
    const outer = await repository();
    const copy = join(outer, 'molf');
    await mkdir(copy);
    expect(readBuildCommit({ root: copy })).toBe('unknown');
    expect(readBuildCommit({ root: outer, env: { PATH: '/nonexistent' } })).toBe('unknown');
  });
});

describe('molf --version', () => {
  it('from the sources names the commit of the checkout they are in', async () => {
    // The sources themselves, as the launcher runs them when the bundle is stale.
    const sources = execFileSync(process.execPath, [MAIN, '--version'], { cwd: tmpdir(), encoding: 'utf8' }).trim();
    const match = VERSION_LINE.exec(sources);
    expect(match, sources).not.toBeNull();
    expect(match?.[1]).toBe(git(ROOT, ['rev-parse', '--short', 'HEAD']));
    expect(match?.[2] === '-dirty').toBe(git(ROOT, ['status', '--porcelain', '--untracked-files=no']) !== '');
    expect(match?.[3]).toBe(git(ROOT, ['log', '-1', '--format=%cs', 'HEAD']));
  });

  it('as users run it (the bundle) names a commit of this repository even where git cannot be found', async () => {
    expect(bundleIsFresh(), 'the tests run the bundle, rebuilt by the global setup when stale').toBe(true);
    const result = await spawnMolf(['--version'], { cwd: await tempDir(), env: { PATH: '/nonexistent' } });
    expect(result.exitCode).toBe(0);
    const match = VERSION_LINE.exec(result.stdout.trim());
    expect(match, result.stdout).not.toBeNull();
    // The bundle was built from a commit of this checkout (not necessarily HEAD, if a commit came since).
    expect(git(ROOT, ['rev-parse', '--verify', '--quiet', `${match?.[1]}^{commit}`])).toMatch(/^[0-9a-f]{40}$/);
  });

  it('-V prints the same line', async () => {
    const [long, short] = await Promise.all([spawnMolf(['--version']), spawnMolf(['-V'])]);
    expect(long.stdout).toMatch(/^molf 0\.1\.0 \(/);
    expect(short.stdout).toBe(long.stdout);
  });
});

import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DATA_DIR_LOCK_FILE, lockDataDir } from './data-dir-lock.ts';

const made: string[] = [];
afterEach(async () => {
  for (const dir of made.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function dataDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'molf-lock-'));
  made.push(dir);
  return dir;
}

const lockText = (fields: Record<string, unknown>) =>
  JSON.stringify({ host: hostname(), holder: 'molf server', at: '2026-11-25T00:00:00.000Z', ...fields });

/** A process that ran and ended: its pid is free (until the system gives it again). */
async function endedPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '0'], { stdio: 'ignore' });
  await new Promise((resolveExit) => child.once('exit', resolveExit));
  return child.pid as number;
}

describe('the data directory lock', () => {
  it('refuses a second holder while the first holds it, naming it, and lets it go on release', async () => {
    const dir = await dataDir();
    const first = await lockDataDir(dir, { holder: 'molf server' });
    await expect(lockDataDir(dir, { holder: 'molf migrate', otherwise: 'copy another' })).rejects.toMatchObject({
      code: 'conflict',
      message: expect.stringMatching(
        new RegExp(`in use by molf server \\(pid ${process.pid}, since .*\\): stop it first, or copy another$`),
      ),
    });
    await first.release();
    // Nothing is left beside the claim: its draft went once it was in place.
    expect(await readdir(dir)).toEqual([]);
    const second = await lockDataDir(dir, { holder: 'molf migrate' });
    expect(JSON.parse(await readFile(join(dir, DATA_DIR_LOCK_FILE), 'utf8'))).toMatchObject({
      holder: 'molf migrate',
      pid: process.pid,
    });
    await second.release();
  });

  it('takes over a lock whose process is gone, whose pid now names another process, or that is not a lock', async () => {
    const dir = await dataDir();
    const path = join(dir, DATA_DIR_LOCK_FILE);
    for (const left of [
      lockText({ pid: await endedPid() }),
      // pid 1 runs, but started at another time than the one written: a pid given again.
      lockText({ pid: 1, started: '1' }),
      '{"pid": 12, "hos',
    ]) {
      await writeFile(path, left);
      const lock = await lockDataDir(dir, { holder: 'molf server' });
      expect(JSON.parse(await readFile(path, 'utf8'))).toMatchObject({ pid: process.pid });
      await lock.release();
    }
  });

  it('refuses a lock of another host while it is renewed, and takes it over once it lapsed', async () => {
    const dir = await dataDir();
    const path = join(dir, DATA_DIR_LOCK_FILE);
    await writeFile(path, lockText({ pid: 4242, host: 'elsewhere.example' }));
    await expect(lockDataDir(dir, { holder: 'molf server' })).rejects.toMatchObject({
      message: expect.stringContaining(
        `pid 4242 on elsewhere.example, since 2026-11-25T00:00:00.000Z): stop it first (if it is gone, its claim lapses a minute after it last renewed it, or remove ${path})`,
      ),
    });
    // Untouched for two minutes: that server is gone (a container that was replaced, say).
    const then = new Date(Date.now() - 120_000);
    await utimes(path, then, then);
    const lock = await lockDataDir(dir, { holder: 'molf server' });
    expect(JSON.parse(await readFile(path, 'utf8'))).toMatchObject({ pid: process.pid, host: hostname() });
    await lock.release();
  });

  it('leaves alone, on release, a lock another process took since', async () => {
    const dir = await dataDir();
    const path = join(dir, DATA_DIR_LOCK_FILE);
    const lock = await lockDataDir(dir, { holder: 'molf server' });
    const other = lockText({ pid: 4242, host: 'elsewhere.example' });
    await writeFile(path, other);
    await lock.release();
    expect(await readFile(path, 'utf8')).toBe(other);
  });
});

import { chmod, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checkPrivateDir, checkSecretFile } from './check-private-paths.ts';

const directories: string[] = [];
afterEach(async () => {
  for (const directory of directories.splice(0)) await rm(directory, { recursive: true, force: true });
});

async function tempDir(): Promise<string> {
  const directory = await realpath(await mkdtemp(join(tmpdir(), 'molf-doctor-dir-')));
  directories.push(directory);
  return directory;
}

const check = (dir: string, uid?: number) =>
  checkPrivateDir({ id: 'data-dir', label: 'data directory', dir, ...(uid === undefined ? {} : { uid }) });

describe('a private directory', () => {
  it('is ok at 0700 and owned by the user', async () => {
    const dir = await tempDir();
    await chmod(dir, 0o700);
    expect(await check(dir)).toEqual({
      id: 'data-dir',
      status: 'ok',
      summary: `data directory ${dir}: private (0700, yours)`,
    });
  });

  it('is a problem when other users can read it, fixed by chmod 700', async () => {
    const dir = await tempDir();
    await chmod(dir, 0o755);
    expect(await check(dir)).toEqual({
      id: 'data-dir',
      status: 'error',
      summary: `data directory ${dir} is mode 0755: other users can read it`,
      fix: `chmod 700 ${dir}`,
    });
    await chmod(dir, 0o711);
    expect((await check(dir)).summary).toContain('other users can enter it');
  });

  it("is a problem when it is another user's, fixed by chown", async () => {
    const dir = await tempDir();
    const other = (process.getuid?.() ?? 0) + 1;
    const result = await check(dir, other);
    expect(result.status).toBe('error');
    expect(result.summary).toContain(`belongs to user ${process.getuid?.()}, not to you (${other})`);
    expect(result.fix).toBe(`sudo chown -R ${other} ${dir}`);
  });

  it('is skipped while it does not exist yet, and a problem when it is a file', async () => {
    const dir = await tempDir();
    expect((await check(join(dir, 'none'))).status).toBe('skipped');
    await writeFile(join(dir, 'file'), '');
    expect(await check(join(dir, 'file'))).toMatchObject({
      status: 'error',
      summary: expect.stringContaining('not a directory'),
    });
  });
});

describe('a file holding secrets', () => {
  it('is a problem when other users can read it, fixed by chmod 600', async () => {
    const file = join(await tempDir(), 'config.jsonc');
    await writeFile(file, '{}', { mode: 0o644 });
    await chmod(file, 0o644);
    expect(await checkSecretFile({ id: 'config-file', label: 'config file', file })).toMatchObject({
      status: 'error',
      fix: `chmod 600 ${file}`,
    });
    await chmod(file, 0o600);
    expect((await checkSecretFile({ id: 'config-file', label: 'config file', file })).status).toBe('ok');
  });
});

import { chmod, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checkBubblewrap } from './check-bubblewrap.ts';
import { checkRipgrep } from './check-ripgrep.ts';
import { findExecutable } from './find-executable.ts';

/** ripgrep where this machine has it. */
const rg = await findExecutable('rg', { env: process.env, cwd: '/' });

const directories: string[] = [];
afterEach(async () => {
  for (const directory of directories.splice(0)) await rm(directory, { recursive: true, force: true });
});

/** A directory to be the whole PATH. */
async function binDir(): Promise<string> {
  const directory = await realpath(await mkdtemp(join(tmpdir(), 'molf-doctor-path-')));
  directories.push(directory);
  return directory;
}

describe('the ripgrep and bubblewrap checks', () => {
  it('warn without ripgrep: the grep tool still works, slower', async () => {
    expect(await checkRipgrep({ PATH: await binDir() })).toEqual({
      id: 'ripgrep',
      status: 'warning',
      summary: 'ripgrep (rg) is not on PATH: the grep tool uses its slower JavaScript engine',
      fix: expect.stringContaining('apt-get install ripgrep'),
    });
  });

  it.skipIf(!rg.found)("name ripgrep's version and path when it is on PATH", async () => {
    const bin = await binDir();
    await symlink((rg as { path: string }).path, join(bin, 'rg'));
    expect(await checkRipgrep({ PATH: bin })).toMatchObject({
      status: 'ok',
      summary: expect.stringMatching(new RegExp(`^ripgrep \\d+\\.\\d+\\.\\d+.* \\(${join(bin, 'rg')}\\)$`)),
    });
  });

  it.skipIf(process.platform !== 'linux')('warn without bubblewrap, with how to install it', async () => {
    expect(await checkBubblewrap({ PATH: await binDir() })).toEqual({
      id: 'bubblewrap',
      status: 'warning',
      summary: 'bubblewrap (bwrap) is not on PATH: --sandbox cannot run commands in a sandbox',
      fix: expect.stringContaining('apt-get install bubblewrap'),
    });
  });

  it.skipIf(process.platform !== 'linux')(
    'fail for a bubblewrap that is installed but refused its namespaces, with the fix for that',
    async () => {
      const bin = await binDir();
      // What bwrap prints where unprivileged user namespaces are off (Ubuntu 24.04's AppArmor rule).
      await writeFile(
        join(bin, 'bwrap'),
        '#!/bin/sh\necho "bwrap: setting up uid map: Permission denied" >&2\nexit 1\n',
      );
      await chmod(join(bin, 'bwrap'), 0o755);
      const check = await checkBubblewrap({ PATH: `${bin}:/usr/bin:/bin` });
      expect(check).toMatchObject({
        id: 'bubblewrap',
        status: 'error',
        summary: expect.stringContaining(
          `bubblewrap ${join(bin, 'bwrap')} is installed but the sandbox self-test fails`,
        ),
        fix: expect.stringContaining('kernel.apparmor_restrict_unprivileged_userns=0'),
      });
      expect(check.summary).toContain('uid map: Permission denied');
    },
  );
});

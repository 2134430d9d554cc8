import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { planSandboxMounts } from './plan-sandbox-mounts.ts';
import { outsideTmpDir } from './sandbox-test-kit.ts';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function tempDir(): Promise<string> {
  const path = await realpath(await mkdtemp(join(tmpdir(), 'molf-plan-')));
  cleanups.push(() => rm(path, { recursive: true, force: true }));
  return path;
}

describe('the mounts planned for a sandbox', () => {
  it('binds the workdir, re-binds what exists of .molf and .git read-only, and skips what does not exist', async () => {
    const workdir = await tempDir();
    await mkdir(join(workdir, '.molf'));
    await mkdir(join(workdir, '.git', 'hooks'), { recursive: true });
    const mounts = await planSandboxMounts({
      workdir,
      writable: [join(workdir, 'missing-cache')],
      readOnly: [join(workdir, '.molf'), join(workdir, '.git', 'hooks'), join(workdir, '.git', 'config')],
      hidden: [join(workdir, 'no-such-secret')],
    });
    expect(mounts).toEqual([
      { type: 'writable', path: workdir },
      { type: 'read-only', path: join(workdir, '.molf') },
      { type: 'read-only', path: join(workdir, '.git', 'hooks') },
    ]);
  });

  it('hides directories with an empty tmpfs and files with /dev/null, at the place a symlink leads to', async () => {
    const workdir = await tempDir();
    const secrets = await tempDir();
    await writeFile(join(secrets, 'token'), 'x');
    await symlink(join(secrets, 'token'), join(workdir, 'token-link'));
    const mounts = await planSandboxMounts({
      workdir,
      writable: [secrets],
      readOnly: [],
      hidden: [join(workdir, 'token-link'), secrets],
    });
    expect(mounts).toContainEqual({ type: 'hidden-file', path: join(secrets, 'token') });
    // Parents first, and for the same path the hiding comes last so that it wins.
    const secretsIndex = mounts.findIndex((mount) => mount.path === secrets && mount.type === 'hidden-directory');
    expect(mounts.findIndex((mount) => mount.path === secrets && mount.type === 'writable')).toBeLessThan(secretsIndex);
    expect(mounts.findIndex((mount) => mount.type === 'hidden-file')).toBeGreaterThan(secretsIndex);
  });

  it('mounts a workdir inside a hidden directory after hiding it, so the workdir stays visible', async () => {
    await using outside = await outsideTmpDir('molf-plan-');
    const home = outside.path;
    const workdir = join(home, 'code', 'project');
    await mkdir(workdir, { recursive: true });
    const mounts = await planSandboxMounts({ workdir, writable: [], readOnly: [], hidden: [home] });
    expect(mounts).toEqual([
      { type: 'hidden-directory', path: home },
      { type: 'writable', path: workdir },
    ]);
  });

  it('leaves out hidden paths under /tmp that nothing mounts again: the private /tmp hides them already', async () => {
    const workdir = await tempDir();
    const elsewhere = await tempDir();
    const mounts = await planSandboxMounts({ workdir, writable: [], readOnly: [], hidden: [elsewhere] });
    expect(mounts).toEqual([{ type: 'writable', path: workdir }]);
  });

  it('still hides a path under /tmp inside a directory mounted again read-only (Molf installed in /tmp)', async () => {
    const workdir = await tempDir();
    const install = await tempDir();
    const secrets = join(install, 'data');
    await mkdir(secrets);
    const mounts = await planSandboxMounts({ workdir, writable: [], readOnly: [install], hidden: [secrets] });
    expect(mounts).toContainEqual({ type: 'hidden-directory', path: secrets });
    expect(mounts.findIndex((mount) => mount.path === install)).toBeLessThan(
      mounts.findIndex((mount) => mount.path === secrets),
    );
  });
});

import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_GIT_DIRECTORIES } from './plan-git-mounts.ts';
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
      // A mount point of its own, so that it cannot be moved aside with its read-only hooks.
      { type: 'pinned', path: join(workdir, '.git') },
      { type: 'read-only', path: join(workdir, '.molf') },
      { type: 'read-only', path: join(workdir, '.git', 'hooks') },
    ]);
  });

  it("pins the submodules' and worktrees' git directories and every directory above them, their hooks and config read-only", async () => {
    const workdir = await tempDir();
    for (const module of ['lib', 'vendor/deep', 'lib/modules/nested']) {
      await mkdir(join(workdir, '.git', 'modules', module, 'hooks'), { recursive: true });
      await writeFile(join(workdir, '.git', 'modules', module, 'HEAD'), 'ref: refs/heads/main\n');
      await writeFile(join(workdir, '.git', 'modules', module, 'config'), '[core]\n');
    }
    await mkdir(join(workdir, '.git', 'worktrees', 'wt'), { recursive: true });
    await writeFile(join(workdir, '.git', 'worktrees', 'wt', 'commondir'), '../..\n');
    // A link is not followed: what it leads to is no git directory of this workdir.
    const elsewhere = await tempDir();
    await mkdir(join(elsewhere, 'hooks'));
    await writeFile(join(elsewhere, 'HEAD'), 'ref: refs/heads/main\n');
    await symlink(elsewhere, join(workdir, '.git', 'modules', 'linked'));
    const mounts = await planSandboxMounts({ workdir, writable: [], readOnly: [], hidden: [] });
    const git = (path: string) => join(workdir, '.git', path);
    expect(mounts.filter((mount) => mount.type === 'pinned').map((mount) => mount.path)).toEqual(
      [
        git(''),
        git('modules'),
        git('worktrees'),
        git('modules/lib'),
        git('modules/vendor'),
        git('worktrees/wt'),
        git('modules/lib/modules'),
        git('modules/vendor/deep'),
        git('modules/lib/modules/nested'),
      ].map((path) => path.replace(/\/$/, '')),
    );
    expect(mounts.filter((mount) => mount.type === 'read-only').map((mount) => mount.path)).toEqual([
      git('modules/lib/config'),
      git('modules/lib/hooks'),
      git('worktrees/wt/commondir'),
      git('modules/vendor/deep/config'),
      git('modules/vendor/deep/hooks'),
      git('modules/lib/modules/nested/config'),
      git('modules/lib/modules/nested/hooks'),
    ]);
    expect(mounts.some((mount) => mount.path.startsWith(elsewhere) || mount.path === git('modules/linked'))).toBe(
      false,
    );
  });

  it(`makes .git/modules read-only whole past ${MAX_GIT_DIRECTORIES} submodules, rather than protect some`, async () => {
    const workdir = await tempDir();
    for (let index = 0; index <= MAX_GIT_DIRECTORIES; index += 1) {
      await mkdir(join(workdir, '.git', 'modules', `m${index}`), { recursive: true });
      await writeFile(join(workdir, '.git', 'modules', `m${index}`, 'HEAD'), 'ref: refs/heads/main\n');
    }
    const mounts = await planSandboxMounts({ workdir, writable: [], readOnly: [], hidden: [] });
    expect(mounts).toEqual([
      { type: 'writable', path: workdir },
      { type: 'pinned', path: join(workdir, '.git') },
      { type: 'read-only', path: join(workdir, '.git', 'modules') },
    ]);
  });

  it('does not follow a link where a writable path inside the workdir was: a command could have put it there', async () => {
    const workdir = await tempDir();
    await using outside = await outsideTmpDir('molf-plan-');
    await symlink(outside.path, join(workdir, 'cache'));
    const mounts = await planSandboxMounts({ workdir, writable: [join(workdir, 'cache')], readOnly: [], hidden: [] });
    expect(mounts).toEqual([{ type: 'writable', path: workdir }]);
  });

  it('pins the directories between the workdir and a hidden file in it', async () => {
    const workdir = await tempDir();
    await mkdir(join(workdir, 'config', 'prod'), { recursive: true });
    await writeFile(join(workdir, 'config', 'prod', 'secrets.env'), 'x');
    const mounts = await planSandboxMounts({
      workdir,
      writable: [],
      readOnly: [],
      hidden: [join(workdir, 'config', 'prod', 'secrets.env')],
    });
    expect(mounts).toEqual([
      { type: 'writable', path: workdir },
      { type: 'pinned', path: join(workdir, 'config') },
      { type: 'pinned', path: join(workdir, 'config', 'prod') },
      { type: 'hidden-file', path: join(workdir, 'config', 'prod', 'secrets.env') },
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

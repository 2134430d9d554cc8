import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createPathPolicy, type PathPolicy, resolveToolPath } from './resolve-tool-path.ts';

let base: string;
let workdir: string;
let outside: string;
let policy: PathPolicy;

beforeEach(async () => {
  base = await realpath(await mkdtemp(join(tmpdir(), 'molf-paths-')));
  workdir = join(base, 'project');
  outside = join(base, 'outside');
  await mkdir(join(workdir, 'src'), { recursive: true });
  await mkdir(outside);
  await writeFile(join(outside, 'secret.txt'), 'secret');
  await writeFile(join(workdir, 'src', 'main.ts'), 'x');
  policy = await createPathPolicy({ workdir });
});

afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

async function resolved(path: string, withPolicy: PathPolicy = policy) {
  const result = await resolveToolPath(withPolicy, path);
  return result.ok ? result.value.canonical : result.error.meta?.errorKind;
}

describe('resolveToolPath', () => {
  it('resolves relative paths against the workdir', async () => {
    expect(await resolved('src/main.ts')).toBe(join(workdir, 'src', 'main.ts'));
    expect(await resolved('.')).toBe(workdir);
    expect(await resolved(join(workdir, 'src'))).toBe(join(workdir, 'src'));
  });

  it('accepts a new file under a directory that does not exist yet', async () => {
    expect(await resolved('new/dir/file.txt')).toBe(join(workdir, 'new', 'dir', 'file.txt'));
  });

  it('refuses .. and absolute paths that leave the workdir', async () => {
    expect(await resolved('../outside/secret.txt')).toBe('workdir_escape');
    expect(await resolved('/etc/passwd')).toBe('workdir_escape');
    expect(await resolved('src/../../outside')).toBe('workdir_escape');
  });

  it('does not mistake a sibling with the same prefix for the workdir', async () => {
    await mkdir(join(base, 'project-other'));
    expect(await resolved('../project-other/x')).toBe('workdir_escape');
  });

  it('refuses a symlink inside the workdir that leads outside, for reading and writing', async () => {
    await symlink(join(outside, 'secret.txt'), join(workdir, 'link.txt'));
    await symlink(outside, join(workdir, 'linkdir'));
    expect(await resolved('link.txt')).toBe('workdir_escape');
    expect(await resolved('linkdir/secret.txt')).toBe('workdir_escape');
    // A file that doesn't exist yet behind a linked directory would be created outside.
    expect(await resolved('linkdir/new.txt')).toBe('workdir_escape');
  });

  it('follows a dangling symlink to where a write would create the file', async () => {
    await symlink(join(outside, 'not-yet.txt'), join(workdir, 'dangling.txt'));
    expect(await resolved('dangling.txt')).toBe('workdir_escape');
    await symlink(join(workdir, 'src', 'later.txt'), join(workdir, 'inner-dangling.txt'));
    expect(await resolved('inner-dangling.txt')).toBe(join(workdir, 'src', 'later.txt'));
  });

  it('allows symlinks that stay inside, and configured extra roots', async () => {
    await symlink(join(workdir, 'src'), join(workdir, 'alias'));
    expect(await resolved('alias/main.ts')).toBe(join(workdir, 'src', 'main.ts'));
    const wider = await createPathPolicy({ workdir, extraRoots: [outside] });
    expect(await resolved('../outside/secret.txt', wider)).toBe(join(outside, 'secret.txt'));
  });

  it('follows a link before the .. after it, as the kernel does', async () => {
    // nl leads to src/nested: nl/../main.ts is src/main.ts, not the workdir's main.ts.
    await mkdir(join(workdir, 'src', 'nested'));
    await symlink(join(workdir, 'src', 'nested'), join(workdir, 'nl'));
    await mkdir(join(outside, 'deep'));
    await symlink(join(outside, 'deep'), join(workdir, 'out'));
    expect(await resolved('nl/../main.ts')).toBe(join(workdir, 'src', 'main.ts'));
    expect(await resolved('./nl/./../main.ts')).toBe(join(workdir, 'src', 'main.ts'));
    // out/.. is the outside directory, not the workdir.
    expect(await resolved('out/../secret.txt')).toBe('workdir_escape');
    // The path the tool then opens is that same file.
    const opened = await resolveToolPath(policy, 'nl/../main.ts');
    expect(opened.ok && opened.value.absolute).toBe(join(workdir, 'src', 'main.ts'));
  });

  it('survives a symlink loop', async () => {
    await symlink(join(workdir, 'b'), join(workdir, 'a'));
    await symlink(join(workdir, 'a'), join(workdir, 'b'));
    const result = await resolveToolPath(policy, 'a');
    expect(result.ok).toBe(true);
  });

  it('names the real location in the error so the model knows why', async () => {
    await symlink(outside, join(workdir, 'linkdir'));
    const result = await resolveToolPath(policy, 'linkdir/secret.txt');
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error.error).toContain(`leads to ${join(outside, 'secret.txt')}`);
  });
});

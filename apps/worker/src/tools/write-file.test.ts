import { chmod, mkdir, readdir, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createToolSandbox } from './tool-test-kit.ts';
import { writeFileTool } from './write-file.ts';

describe('write_file', () => {
  it('creates a file and reports the bytes written', async () => {
    await using box = await createToolSandbox();
    const result = await box.run(writeFileTool, { path: 'a.txt', content: 'héllo' });
    expect(result.output).toBe('Created a.txt (6 bytes written).');
    expect(await readFile(join(box.workdir, 'a.txt'), 'utf8')).toBe('héllo');
  });

  it('keeps an existing file’s mode and leaves no temp file behind', async () => {
    await using box = await createToolSandbox();
    const script = join(box.workdir, 'run.sh');
    await writeFile(script, 'old');
    await chmod(script, 0o750);
    const result = await box.run(writeFileTool, { path: 'run.sh', content: 'new' });
    expect(result.output).toContain('Overwrote');
    expect((await stat(script)).mode & 0o777).toBe(0o750);
    expect(await readdir(box.workdir)).toEqual(['run.sh']);
  });

  it('creates missing directories only when asked', async () => {
    await using box = await createToolSandbox();
    expect((await box.run(writeFileTool, { path: 'a/b/c.txt', content: 'x' })).meta?.errorKind).toBe('not_found');
    await box.run(writeFileTool, { path: 'a/b/c.txt', content: 'x', createDirectories: true });
    expect(await readFile(join(box.workdir, 'a', 'b', 'c.txt'), 'utf8')).toBe('x');
  });

  it('refuses to overwrite when overwrite is false, and refuses directories', async () => {
    await using box = await createToolSandbox();
    await writeFile(join(box.workdir, 'keep.txt'), 'keep');
    await mkdir(join(box.workdir, 'dir'));
    expect((await box.run(writeFileTool, { path: 'keep.txt', content: 'x', overwrite: false })).meta?.errorKind).toBe(
      'already_exists',
    );
    expect(await readFile(join(box.workdir, 'keep.txt'), 'utf8')).toBe('keep');
    expect((await box.run(writeFileTool, { path: 'dir', content: 'x' })).meta?.errorKind).toBe('not_regular_file');
  });

  it('never writes through a symlink that leads outside the workdir', async () => {
    await using box = await createToolSandbox();
    await using outside = await createToolSandbox();
    await writeFile(join(outside.workdir, 'victim.txt'), 'safe');
    await symlink(join(outside.workdir, 'victim.txt'), join(box.workdir, 'link.txt'));
    await symlink(join(outside.workdir, 'new.txt'), join(box.workdir, 'dangling.txt'));
    expect((await box.run(writeFileTool, { path: 'link.txt', content: 'pwned' })).meta?.errorKind).toBe(
      'workdir_escape',
    );
    expect((await box.run(writeFileTool, { path: 'dangling.txt', content: 'pwned' })).meta?.errorKind).toBe(
      'workdir_escape',
    );
    expect(await readFile(join(outside.workdir, 'victim.txt'), 'utf8')).toBe('safe');
    expect(await readdir(outside.workdir)).toEqual(['victim.txt']);
  });

  it('never writes into the worker’s .molf directory, however the path leads there', async () => {
    await using box = await createToolSandbox();
    const identity = join(box.workdir, '.molf', 'worker.json');
    await mkdir(join(box.workdir, '.molf'));
    await writeFile(identity, '{"workerId": "w1"}');
    await mkdir(join(box.workdir, 'x'));
    await symlink(identity, join(box.workdir, 'link.json'));
    await symlink(join(box.workdir, '.molf'), join(box.workdir, 'state'));
    for (const path of [
      '.molf/worker.json',
      './x/../.molf/worker.json',
      'link.json',
      'state/worker.json',
      '.molf/tool-output/new.txt',
    ]) {
      const result = await box.run(writeFileTool, { path, content: 'pwned', createDirectories: true });
      expect(result.meta?.errorKind, path).toBe('permission_denied');
      expect(result.error, path).toContain('worker’s own .molf directory');
    }
    expect(await readFile(identity, 'utf8')).toBe('{"workerId": "w1"}');
    expect(await readdir(join(box.workdir, '.molf'))).toEqual(['worker.json']);
  });

  it('treats the directory a .molf link leads to as .molf', async () => {
    await using box = await createToolSandbox();
    await mkdir(join(box.workdir, 'kept-state'));
    await symlink('kept-state', join(box.workdir, '.molf'));
    const result = await box.run(writeFileTool, { path: 'kept-state/worker.json', content: '{}' });
    expect(result.meta?.errorKind).toBe('permission_denied');
    expect(await readdir(join(box.workdir, 'kept-state'))).toEqual([]);
  });

  it('refuses to create .molf when it does not exist yet', async () => {
    await using box = await createToolSandbox();
    for (const path of ['.molf', '.molf/worker.json']) {
      const result = await box.run(writeFileTool, { path, content: '{}', createDirectories: true });
      expect(result.meta?.errorKind, path).toBe('permission_denied');
    }
    expect(await readdir(box.workdir)).toEqual([]);
  });

  it('still writes files whose names only start like .molf', async () => {
    await using box = await createToolSandbox();
    const result = await box.run(writeFileTool, { path: '.molfrc', content: 'ok' });
    expect(result.output).toBe('Created .molfrc (2 bytes written).');
  });
});

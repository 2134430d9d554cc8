import { execFileSync } from 'node:child_process';
import { constants } from 'node:fs';
import { mkdir, open, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { GLOB_MAX_RESULTS, globTool } from './glob-files.ts';
import { createToolSandbox } from './tool-test-kit.ts';

describe('glob', () => {
  it('sorts the whole match set newest first before capping it', async () => {
    await using box = await createToolSandbox();
    await mkdir(join(box.workdir, 'src'));
    const count = GLOB_MAX_RESULTS + 50;
    const now = Date.now() / 1000;
    for (let index = 0; index < count; index += 1) {
      const file = join(box.workdir, 'src', `f${String(index).padStart(3, '0')}.ts`);
      await writeFile(file, '');
      // The files that sort last by name are the newest, so a cap before sorting would lose them.
      await utimes(file, now - (count - index) * 60, now - (count - index) * 60);
    }
    const result = await box.run(globTool, { pattern: '**/*.ts' });
    const lines = result.output.split('\n');
    expect(lines[0]).toBe(join('src', `f${count - 1}.ts`));
    expect(lines[GLOB_MAX_RESULTS - 1]).toBe(join('src', 'f050.ts'));
    expect(lines[GLOB_MAX_RESULTS]).toContain(`Showing the ${GLOB_MAX_RESULTS} newest of ${count} matches`);
    expect(result.meta?.truncated).toBe(true);
  });

  it('respects .gitignore files, includes dotfiles and never looks inside .git', async () => {
    await using box = await createToolSandbox();
    for (const dir of ['.git/objects', 'node_modules/pkg', 'lib/generated', '.config']) {
      await mkdir(join(box.workdir, dir), { recursive: true });
    }
    await writeFile(join(box.workdir, '.gitignore'), 'node_modules/\n*.log\n');
    await writeFile(join(box.workdir, 'lib', '.gitignore'), 'generated/\n');
    const files = [
      '.git/objects/x.js',
      'node_modules/pkg/i.js',
      'lib/generated/g.js',
      'lib/a.js',
      '.config/c.js',
      'app.js',
      'debug.log',
    ];
    for (const file of files) await writeFile(join(box.workdir, file), '');
    const result = await box.run(globTool, { pattern: '**/*' });
    expect(result.output.split('\n').sort()).toEqual([
      '.config/c.js',
      '.gitignore',
      'app.js',
      'lib/.gitignore',
      'lib/a.js',
    ]);
  });

  it('refuses patterns that would leave the searched directory', async () => {
    await using box = await createToolSandbox();
    await using outside = await createToolSandbox();
    await writeFile(join(outside.workdir, 's.txt'), '');
    for (const pattern of ['../*', '../**/*', `${outside.workdir}/*`, 'a/../../*']) {
      expect((await box.run(globTool, { pattern })).meta?.errorKind).toBe('workdir_escape');
    }
  });

  it('searches under a given path and refuses one outside the workdir', async () => {
    await using box = await createToolSandbox();
    await mkdir(join(box.workdir, 'a'));
    await writeFile(join(box.workdir, 'a', 'x.md'), '');
    await writeFile(join(box.workdir, 'y.md'), '');
    expect((await box.run(globTool, { pattern: '*.md', path: 'a' })).output).toBe(join('a', 'x.md'));
    expect((await box.run(globTool, { pattern: '*.md', path: '..' })).meta?.errorKind).toBe('workdir_escape');
    expect((await box.run(globTool, { pattern: '*.rs' })).output).toBe('No files match *.rs in the workdir.');
  });

  it('skips a .gitignore that is a FIFO instead of waiting on it forever', { timeout: 120_000 }, async () => {
    await using box = await createToolSandbox();
    await mkdir(join(box.workdir, 'sub'));
    await writeFile(join(box.workdir, 'sub', 'a.ts'), '');
    // The walk skips FIFOs; the .gitignore files of the searched directory's ancestors are read by name.
    const fifo = join(box.workdir, '.gitignore');
    execFileSync('mkfifo', [fifo]);
    const call = box.run(globTool, { pattern: '**/*.ts' });
    let timer: NodeJS.Timeout | undefined;
    const blocked = new Promise<'blocked'>((resolve) => {
      // A deadline, not a measurement: far above what listing two files takes.
      timer = setTimeout(() => resolve('blocked'), 60_000);
    });
    const outcome = await Promise.race([call, blocked]);
    clearTimeout(timer);
    if (outcome === 'blocked') {
      // Let a reader stuck in open() go: a writer that opens and closes gives it end of file.
      await (await open(fifo, constants.O_WRONLY | constants.O_NONBLOCK)).close();
      await call;
    }
    expect(outcome).not.toBe('blocked');
    expect(outcome === 'blocked' ? undefined : outcome.output).toBe(join('sub', 'a.ts'));
  });
});

import { mkdir, symlink, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createGrepTool, findRipgrep, GREP_MAX_LINE_CHARS, GREP_MAX_MATCHES } from './grep-files.ts';
import { createToolSandbox } from './tool-test-kit.ts';

// CI installs ripgrep (.ci/run); without it only the JavaScript engine can be checked here.
const engines = findRipgrep() === undefined ? (['javascript'] as const) : (['ripgrep', 'javascript'] as const);

async function fixture(workdir: string) {
  const now = Date.now() / 1000;
  const files: Array<[string, string, number]> = [
    ['old.ts', 'const needle = 1;\nother\nneedle again\n', now - 3_000],
    ['src/new.ts', 'nothing\nthe needle\n', now - 100],
    ['src/mid.js', 'needle in js\n', now - 1_000],
    ['.hidden/h.ts', 'hidden needle\n', now - 2_000],
    ['.git/config', 'needle in git\n', now],
    ['ignored/i.ts', 'needle ignored\n', now],
    ['dash.txt', '--files\n-v is a flag\n', now - 500],
  ];
  await writeFile(join(workdir, '.gitignore'), 'ignored/\n');
  for (const [file, content, mtime] of files) {
    await mkdir(join(workdir, file, '..'), { recursive: true });
    await writeFile(join(workdir, file), content);
    await utimes(join(workdir, file), mtime, mtime);
  }
}

describe.each(engines)('grep with the %s engine', (engine) => {
  const grep = createGrepTool(engine);

  it('lists matches as file:line: text, newest file first, then by line', async () => {
    await using box = await createToolSandbox();
    await fixture(box.workdir);
    const result = await box.run(grep, { pattern: 'needle' });
    expect(result.output.split('\n')).toEqual([
      'src/new.ts:2: the needle',
      'src/mid.js:1: needle in js',
      '.hidden/h.ts:1: hidden needle',
      'old.ts:1: const needle = 1;',
      'old.ts:3: needle again',
    ]);
    expect(result.meta).toEqual({ truncated: false });
  });

  it('never takes a pattern for a flag', async () => {
    await using box = await createToolSandbox();
    await fixture(box.workdir);
    expect((await box.run(grep, { pattern: '--files' })).output).toBe('dash.txt:1: --files');
    expect((await box.run(grep, { pattern: '-v' })).output).toBe('dash.txt:2: -v is a flag');
  });

  it('filters by include and searches one file when path is a file', async () => {
    await using box = await createToolSandbox();
    await fixture(box.workdir);
    expect((await box.run(grep, { pattern: 'needle', include: '*.js' })).output).toBe('src/mid.js:1: needle in js');
    expect((await box.run(grep, { pattern: 'needle', path: 'old.ts' })).output).toBe(
      'old.ts:1: const needle = 1;\nold.ts:3: needle again',
    );
    expect((await box.run(grep, { pattern: 'absent' })).output).toBe('No matches for absent.');
  });

  it('caps matches and cuts long lines', async () => {
    await using box = await createToolSandbox();
    await writeFile(join(box.workdir, 'many.txt'), 'x\n'.repeat(GREP_MAX_MATCHES * 3));
    await writeFile(join(box.workdir, 'long.txt'), `${'y'.repeat(3 * GREP_MAX_LINE_CHARS)}\n`);
    const result = await box.run(grep, { pattern: 'x' });
    const lines = result.output.split('\n');
    expect(lines).toHaveLength(GREP_MAX_MATCHES + 1);
    expect(lines[GREP_MAX_MATCHES]).toContain(`Stopped at ${GREP_MAX_MATCHES} matches`);
    expect(result.meta?.truncated).toBe(true);
    expect((await box.run(grep, { pattern: 'y' })).output).toBe(`long.txt:1: ${'y'.repeat(GREP_MAX_LINE_CHARS)}…`);
  });

  it('keeps its output within 50 KB even when 100 long matches are wider', async () => {
    await using box = await createToolSandbox();
    await writeFile(join(box.workdir, 'wide.txt'), `${'é'.repeat(GREP_MAX_LINE_CHARS)}\n`.repeat(GREP_MAX_MATCHES - 1));
    const result = await box.run(grep, { pattern: 'é' });
    expect(Buffer.byteLength(result.output)).toBeLessThanOrEqual(50 * 1024 + 200);
    expect(result.output).toContain('(output limit)');
    expect(result.meta?.truncated).toBe(true);
  });

  it('refuses include patterns that leave the workdir and never follows links out', async () => {
    await using box = await createToolSandbox();
    await using outside = await createToolSandbox();
    await writeFile(join(outside.workdir, 'secret.txt'), 'SECRET line\n');
    await symlink(join(outside.workdir, 'secret.txt'), join(box.workdir, 'link.txt'));
    for (const include of ['../*', `${outside.workdir}/*`]) {
      expect((await box.run(grep, { pattern: 'SECRET', include })).meta?.errorKind).toBe('workdir_escape');
    }
    expect((await box.run(grep, { pattern: 'SECRET' })).output).toBe('No matches for SECRET.');
  });

  it('stops early on a pattern matching almost every line of a large tree', async () => {
    await using box = await createToolSandbox();
    const line = 'the quick brown fox jumps over the lazy dog\n';
    for (let dir = 0; dir < 20; dir += 1) {
      await mkdir(join(box.workdir, `d${dir}`));
      for (let file = 0; file < 50; file += 1) {
        await writeFile(join(box.workdir, `d${dir}`, `f${file}.txt`), line.repeat(2_000));
      }
    }
    const heapBefore = process.memoryUsage().heapUsed;
    const result = await box.run(grep, { pattern: 'e' });
    expect(result.meta?.truncated).toBe(true);
    expect(result.output.split('\n')).toHaveLength(GREP_MAX_MATCHES + 1);
    expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(100 * 1024 * 1024);
  });

  it('refuses a path outside the workdir and reports a bad pattern', async () => {
    await using box = await createToolSandbox();
    expect((await box.run(grep, { pattern: 'x', path: '..' })).meta?.errorKind).toBe('workdir_escape');
    await writeFile(join(box.workdir, 'a.txt'), 'a');
    expect((await box.run(grep, { pattern: '(' })).meta?.errorKind).toBe('invalid_arguments');
  });
});

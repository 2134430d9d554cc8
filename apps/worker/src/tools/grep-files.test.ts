import { execFileSync } from 'node:child_process';
import { mkdir, open, symlink, utimes, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { createSilentLogger } from '@molf/logging';
import { MolfError, type ToolCallId, type ToolResult } from '@molf/protocol';
import { describe, expect, it } from 'vitest';
import { createGrepTool, findRipgrep, GREP_MAX_LINE_CHARS, GREP_MAX_MATCHES } from './grep-files.ts';
import { createReadTracker } from './read-tracker.ts';
import { runToolCall } from './run-tool-call.ts';
import { runToolInSmallHeap } from './run-tool-in-small-heap.ts';
import type { ToolHandler } from './tool-handler.ts';
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

/** A call as the worker runs it, with its timeout: far above what a bounded search needs. */
function grepAsWorker(grep: ToolHandler, workdir: string, args: Record<string, unknown>): Promise<ToolResult> {
  return runToolCall({
    job: { toolCallId: 'call_grep' as ToolCallId, toolName: 'grep', args, timeoutMs: 60_000 },
    tools: new Map([['grep', grep]]),
    paths: { workdir, extraRoots: [] },
    reads: createReadTracker(),
    controller: new AbortController(),
    logger: createSilentLogger(),
  });
}

/** A 50 GB sparse file (it takes no disk) whose first line matches. */
async function writeSparseFile(path: string): Promise<void> {
  const handle = await open(path, 'w');
  try {
    await handle.write('needle at the start\n');
    await handle.truncate(50 * 1024 ** 3);
  } finally {
    await handle.close();
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

  it('reports a search stopped by the call’s timeout as a timeout, and one stopped by a cancel as cancelled', async () => {
    await using box = await createToolSandbox();
    await writeFile(join(box.workdir, 'a.txt'), 'needle\n');
    const timedOut = new AbortController();
    timedOut.abort(new MolfError('timeout', 'timed out'));
    expect((await box.run(grep, { pattern: 'needle' }, { signal: timedOut.signal })).meta?.errorKind).toBe('timeout');
    const cancelled = new AbortController();
    cancelled.abort(new MolfError('cancelled', 'cancelled'));
    expect((await box.run(grep, { pattern: 'needle' }, { signal: cancelled.signal })).meta?.errorKind).toBe(
      'cancelled',
    );
  });

  it('refuses a FIFO or a socket named as the path at once, and skips them in a directory', {
    timeout: 150_000,
  }, async () => {
    await using box = await createToolSandbox();
    await writeFile(join(box.workdir, 'a.txt'), 'needle\n');
    execFileSync('mkfifo', [join(box.workdir, 'pipe')]);
    await symlink('pipe', join(box.workdir, 'link-to-pipe'));
    await using socket = await listenOnSocket(join(box.workdir, 'sock'));
    for (const path of ['pipe', 'link-to-pipe', 'sock']) {
      const refused = await grepAsWorker(grep, box.workdir, { pattern: 'needle', path });
      expect(refused.meta?.errorKind).toBe('not_regular_file');
      expect(refused.error).toContain('not a regular file');
    }
    expect((await grepAsWorker(grep, box.workdir, { pattern: 'needle' })).output).toBe('a.txt:1: needle');
    expect(socket).toBeDefined();
  });

  it('names at most five of the files skipped for size and counts the rest', { timeout: 150_000 }, async () => {
    await using box = await createToolSandbox();
    for (const name of ['a', 'b', 'c', 'd', 'e', 'f', 'g']) await writeSparseFile(join(box.workdir, `${name}.log`));
    const result = await grepAsWorker(grep, box.workdir, { pattern: 'needle' });
    expect(result.output).toBe(
      'No matches for needle.\n[7 files over 20 MiB not searched: a.log, b.log, c.log, d.log, e.log and 2 more. Read such a file in windows with read_file startLine/endLine, or search it with shell_exec.]',
    );
  });

  it('refuses a file over 20 MiB named as the path, and notes the ones a directory search skips', {
    timeout: 150_000,
  }, async () => {
    await using box = await createToolSandbox();
    await writeFile(join(box.workdir, 'a.txt'), 'needle\n');
    await mkdir(join(box.workdir, 'logs'));
    await writeSparseFile(join(box.workdir, 'logs', 'huge.log'));
    const named = await grepAsWorker(grep, box.workdir, { pattern: 'needle', path: 'logs/huge.log' });
    expect(named.meta?.errorKind).toBe('too_large');
    expect(named.error).toContain('logs/huge.log is 53687091200 bytes; grep searches files up to 20 MiB');

    const walked = await grepAsWorker(grep, box.workdir, { pattern: 'needle' });
    expect(walked.output).toBe(
      'a.txt:1: needle\n[1 file over 20 MiB not searched: logs/huge.log. Read such a file in windows with read_file startLine/endLine, or search it with shell_exec.]',
    );
    expect(walked.meta?.truncated).toBe(false);
    const none = await grepAsWorker(grep, box.workdir, { pattern: 'absent', path: 'logs' });
    expect(none.output).toBe(
      'No matches for absent.\n[1 file over 20 MiB not searched: logs/huge.log. Read such a file in windows with read_file startLine/endLine, or search it with shell_exec.]',
    );
  });
});

describe('grep with the javascript engine in a 64 MB heap', () => {
  it('keeps only the start of each matching line, never the files the lines came from', {
    timeout: 300_000,
  }, async () => {
    await using box = await createToolSandbox();
    // 100 files of one 900 KB line: each line a string on the V8 heap (Node keeps strings over
    // about 1 MB off the heap), so 90 MB of heap if every match held on to its line.
    const line = `${'x'.repeat(900_000)}\n`;
    for (let index = 0; index < GREP_MAX_MATCHES; index += 1) {
      await writeFile(join(box.workdir, `f${String(index).padStart(3, '0')}.txt`), line);
    }
    const child = await runToolInSmallHeap({
      module: './grep-files.ts',
      exportName: 'createGrepTool',
      factoryArguments: ['javascript'],
      workdir: box.workdir,
      args: { pattern: 'x' },
    });
    expect(child.stderr).not.toContain('heap out of memory');
    expect(child.result?.output.split('\n')[0]).toMatch(new RegExp(`^f\\d{3}\\.txt:1: x{${GREP_MAX_LINE_CHARS}}…$`));
  });
});

/** A Unix socket listening at `path`, closed on dispose. */
async function listenOnSocket(path: string): Promise<AsyncDisposable> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(path, resolve));
  return { [Symbol.asyncDispose]: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

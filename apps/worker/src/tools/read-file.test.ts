import { mkdir, open, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { MolfError } from '@molf/protocol';
import { describe, expect, it } from 'vitest';
import { readFileTool } from './read-file.ts';
import { runToolInSmallHeap } from './run-tool-in-small-heap.ts';
import { createToolSandbox } from './tool-test-kit.ts';

/** A file of `megabytes` MiB of `x` on one line (written 1 MiB at a time), then `tail`. */
async function writeOneLongLine(path: string, megabytes: number, tail = ''): Promise<void> {
  const handle = await open(path, 'w');
  try {
    const chunk = Buffer.alloc(1024 * 1024, 'x');
    for (let written = 0; written < megabytes; written += 1) await handle.write(chunk);
    await handle.write(tail);
  } finally {
    await handle.close();
  }
}

const PNG_HEADER = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]);

describe('read_file', () => {
  it('shows line-numbered text with a header', async () => {
    await using box = await createToolSandbox();
    await writeFile(join(box.workdir, 'a.txt'), 'one\ntwo\r\nthree\n');
    const result = await box.run(readFileTool, { path: 'a.txt' });
    expect(result.output).toBe('Content of a.txt (3 lines):\n     1\tone\n     2\ttwo\n     3\tthree');
    expect(result.meta).toEqual({ truncated: false });
  });

  it('shows an empty file as 0 lines', async () => {
    await using box = await createToolSandbox();
    await writeFile(join(box.workdir, 'empty.txt'), '');
    expect((await box.run(readFileTool, { path: 'empty.txt' })).output).toBe('Content of empty.txt (0 lines):\n');
  });

  it('reads a line range and refuses a reversed or out-of-file one', async () => {
    await using box = await createToolSandbox();
    await writeFile(join(box.workdir, 'a.txt'), 'one\ntwo\nthree\nfour\n');
    const range = await box.run(readFileTool, { path: 'a.txt', startLine: 2, endLine: 3 });
    expect(range.output).toBe('Content of a.txt (4 lines, showing 2–3):\n     2\ttwo\n     3\tthree');
    expect((await box.run(readFileTool, { path: 'a.txt', startLine: 3, endLine: 2 })).meta?.errorKind).toBe(
      'invalid_arguments',
    );
    expect((await box.run(readFileTool, { path: 'a.txt', startLine: 9 })).meta?.errorKind).toBe('invalid_arguments');
  });

  it('marks a cut visibly and says where to read on', async () => {
    await using box = await createToolSandbox();
    await writeFile(join(box.workdir, 'big.txt'), Array.from({ length: 3_000 }, (_, i) => `l${i + 1}`).join('\n'));
    const result = await box.run(readFileTool, { path: 'big.txt' });
    expect(result.meta?.truncated).toBe(true);
    expect(result.output).toContain('[… cut at line 2000 of 3000. Read on with read_file');
    expect(result.output).toContain('"startLine": 2001');
  });

  it('gives typed errors for missing files, directories, binaries and escapes', async () => {
    await using box = await createToolSandbox();
    await mkdir(join(box.workdir, 'dir'));
    await writeFile(join(box.workdir, 'blob.bin'), Buffer.from([1, 2, 0, 3, 4]));
    await symlink('/etc/hostname', join(box.workdir, 'escape'));
    const kinds = await Promise.all(
      ['missing.txt', 'dir', 'blob.bin', 'escape', '../x'].map(
        async (path) => (await box.run(readFileTool, { path })).meta?.errorKind,
      ),
    );
    expect(kinds).toEqual(['not_found', 'not_regular_file', 'binary', 'workdir_escape', 'workdir_escape']);
  });

  it('returns images and PDFs as attachments', async () => {
    await using box = await createToolSandbox();
    await writeFile(join(box.workdir, 'pic.png'), PNG_HEADER);
    const result = await box.run(readFileTool, { path: 'pic.png' });
    expect(result.attachments).toEqual([
      { mimeType: 'image/png', path: join(box.workdir, 'pic.png'), size: 12, data: PNG_HEADER.toString('base64') },
    ]);
  });

  it('reads a window of a file too large to load, such as a spilled shell output', async () => {
    await using box = await createToolSandbox();
    const line = `${'z'.repeat(99)}\n`;
    // 25 MB: over the 20 MiB limit for loading whole.
    await writeFile(join(box.workdir, 'huge.txt'), line.repeat(250_000));
    const result = await box.run(readFileTool, { path: 'huge.txt', startLine: 200_001, endLine: 200_003 });
    expect(result.output).toBe(
      `Content of huge.txt (25000000 bytes, too large to count its lines; showing 200001–200003):\n${[
        200_001, 200_002, 200_003,
      ]
        .map((number) => `${String(number).padStart(6)}\t${'z'.repeat(99)}`)
        .join('\n')}`,
    );
    const head = await box.run(readFileTool, { path: 'huge.txt' });
    expect(head.meta?.truncated).toBe(true);
    expect(head.output).toContain('Read on with read_file');
  });

  it('cuts a line over 2,000 characters, saying how long it is', async () => {
    await using box = await createToolSandbox();
    await writeFile(join(box.workdir, 'wide.txt'), `short\n${'w'.repeat(3_000)}\nlast\n`);
    const result = await box.run(readFileTool, { path: 'wide.txt' });
    expect(result.output).toBe(
      `Content of wide.txt (3 lines):\n     1\tshort\n     2\t${'w'.repeat(2_000)}… [line cut at 2,000 characters; the whole line is 3000 bytes]\n     3\tlast`,
    );
  });

  it('reads a saved tool output in .molf/tool-output, as the truncation note tells the model to', async () => {
    await using box = await createToolSandbox();
    await mkdir(join(box.workdir, '.molf', 'tool-output'), { recursive: true });
    await writeFile(join(box.workdir, '.molf', 'tool-output', 'call_1.txt'), 'first\nsecond\n');
    const result = await box.run(readFileTool, { path: '.molf/tool-output/call_1.txt', startLine: 2 });
    expect(result.output).toBe('Content of .molf/tool-output/call_1.txt (2 lines, showing 2–2):\n     2\tsecond');
  });

  it('splits lines at LF, dropping a CR before it, also where a line spans two chunks of the stream', async () => {
    await using box = await createToolSandbox();
    // Read 64 KiB at a time: line 2 starts 3 bytes before the first chunk ends.
    await writeFile(join(box.workdir, 'crlf.txt'), `${'h'.repeat(65_531)}\r\nabcdef\r\nlone\rCR\r\n`);
    // The CR of line 1 is the first chunk's last byte, its LF the next chunk's first.
    await writeFile(join(box.workdir, 'edge.txt'), `${'h'.repeat(65_535)}\r\nnext\n`);
    expect((await box.run(readFileTool, { path: 'crlf.txt', startLine: 2 })).output).toBe(
      'Content of crlf.txt (3 lines, showing 2–3):\n     2\tabcdef\n     3\tlone\rCR',
    );
    const edge = await box.run(readFileTool, { path: 'edge.txt' });
    expect(edge.output).toContain('… [line cut at 2,000 characters; the whole line is 65535 bytes]\n     2\tnext');
  });

  it('reports a read stopped by the call’s timeout as a timeout', async () => {
    await using box = await createToolSandbox();
    await writeFile(join(box.workdir, 'a.txt'), 'one\n');
    const controller = new AbortController();
    controller.abort(new MolfError('timeout', 'timed out'));
    const result = await box.run(readFileTool, { path: 'a.txt' }, { signal: controller.signal });
    expect(result.meta?.errorKind).toBe('timeout');
  });

  it('reads a file of one 200 MB line in bounded memory, showing the start of the line', {
    timeout: 300_000,
  }, async () => {
    await using box = await createToolSandbox();
    await writeOneLongLine(join(box.workdir, 'one-line.txt'), 200, '\nsecond line\n');
    const child = await runToolInSmallHeap({
      module: './read-file.ts',
      exportName: 'readFileTool',
      workdir: box.workdir,
      args: { path: 'one-line.txt' },
    });
    expect(child.stderr).not.toContain('heap out of memory');
    expect(child.result?.output).toBe(
      `Content of one-line.txt (209715213 bytes, too large to count its lines; showing 1–2):\n     1\t${'x'.repeat(2_000)}… [line cut at 2,000 characters; the whole line is 209715200 bytes]\n     2\tsecond line`,
    );
  });

  it('reads a file of one 20 MB line in bounded memory, counting its lines', { timeout: 300_000 }, async () => {
    await using box = await createToolSandbox();
    await writeOneLongLine(join(box.workdir, 'one-line.txt'), 19, '\nsecond line');
    const child = await runToolInSmallHeap({
      module: './read-file.ts',
      exportName: 'readFileTool',
      workdir: box.workdir,
      args: { path: 'one-line.txt', startLine: 1 },
    });
    expect(child.stderr).not.toContain('heap out of memory');
    expect(child.result?.output).toBe(
      `Content of one-line.txt (2 lines):\n     1\t${'x'.repeat(2_000)}… [line cut at 2,000 characters; the whole line is 19922944 bytes]\n     2\tsecond line`,
    );
  });
});

import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readFileTool } from './read-file.ts';
import { createToolSandbox } from './tool-test-kit.ts';

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
});

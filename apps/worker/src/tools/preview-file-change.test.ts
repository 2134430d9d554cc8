import { mkdir, mkdtemp, readdir, readFile, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createReadDenial } from '@molf/permissions';
import type { PreviewFileChangeParams } from '@molf/protocol';
import { describe, expect, it } from 'vitest';
import { editFileTool } from './edit-file.ts';
import { previewFileChange } from './preview-file-change.ts';
import { readFileTool } from './read-file.ts';
import { createToolSandbox } from './tool-test-kit.ts';
import { writeFileTool } from './write-file.ts';

type Box = Awaited<ReturnType<typeof createToolSandbox>>;

function preview(box: Box, params: PreviewFileChangeParams, limits?: { maxFileBytes?: number }) {
  return previewFileChange(params, { paths: box.paths, reads: box.reads, ...(limits === undefined ? {} : { limits }) });
}

describe('previewFileChange', () => {
  it('shows an edit as the diff the tool then writes, and changes nothing itself', async () => {
    await using box = await createToolSandbox();
    const file = join(box.workdir, 'src', 'a.ts');
    await mkdir(join(box.workdir, 'src'));
    await writeFile(file, 'const a = 1;\nconst b = 2;\r\n');
    const args = { path: './src/../src/a.ts', oldString: 'const b = 2;', newString: 'const b = 3;' };
    const shown = await preview(box, { tool: 'edit_file', args });
    expect(shown).toEqual({
      path: 'src/a.ts',
      diff: '--- a/src/a.ts\n+++ b/src/a.ts\n@@ -1,2 +1,2 @@\n const a = 1;\n-const b = 2;\r\n+const b = 3;\r\n',
      truncated: false,
    });
    expect(await readFile(file, 'utf8')).toBe('const a = 1;\nconst b = 2;\r\n');
    const result = await box.run(editFileTool, args);
    const { path: _path, ...diff } = shown;
    expect(result.diff).toEqual(diff);
  });

  it('gives the tool’s own refusal as the note when oldString is not in the file', async () => {
    await using box = await createToolSandbox();
    await writeFile(join(box.workdir, 'a.txt'), 'abc');
    const shown = await preview(box, { tool: 'edit_file', args: { path: 'a.txt', oldString: 'zzz', newString: 'y' } });
    expect(shown.diff).toBe('');
    expect(shown.note).toMatch(/^The call would fail: edit: oldString was not found\./);
    const refused = await preview(box, {
      tool: 'edit_file',
      args: {
        path: 'a.txt',
        edits: [
          { oldString: 'a', newString: 'b' },
          { oldString: 'a', newString: 'c' },
        ],
      },
    });
    expect(refused.note).toContain('edit 2 of 2: oldString was not found');
    expect(refused.note).toContain('No edit was applied.');
  });

  it('shows a new file as a diff from /dev/null without making its directories', async () => {
    await using box = await createToolSandbox();
    const shown = await preview(box, {
      tool: 'write_file',
      args: { path: 'docs/new/readme.md', content: '# Hi\n', createDirectories: true },
    });
    expect(shown).toEqual({
      path: 'docs/new/readme.md',
      diff: '--- /dev/null\n+++ b/docs/new/readme.md\n@@ -0,0 +1,1 @@\n+# Hi\n',
      truncated: false,
    });
    expect(await readdir(box.workdir)).toEqual([]);
  });

  it('shows an overwrite against the file as it is now', async () => {
    await using box = await createToolSandbox();
    await writeFile(join(box.workdir, 'notes.txt'), 'keep\nold\n');
    const shown = await preview(box, { tool: 'write_file', args: { path: 'notes.txt', content: 'keep\nnew\n' } });
    expect(shown.diff).toBe('--- a/notes.txt\n+++ b/notes.txt\n@@ -1,2 +1,2 @@\n keep\n-old\n+new\n');
  });

  it('never reads outside the workdir: a path or a link that leads out gets the tool’s refusal', async () => {
    await using box = await createToolSandbox();
    const outside = await mkdtemp(join(tmpdir(), 'molf-outside-'));
    try {
      await writeFile(join(outside, 'secret.txt'), 'TOP SECRET\n');
      await symlink(join(outside, 'secret.txt'), join(box.workdir, 'link.txt'));
      for (const path of [join(outside, 'secret.txt'), '../x/secret.txt', 'link.txt']) {
        for (const params of [
          { tool: 'write_file', args: { path, content: 'x' } },
          { tool: 'edit_file', args: { path, oldString: 'TOP', newString: 'x' } },
        ] as const) {
          const shown = await preview(box, params);
          expect(shown.diff, `${params.tool} ${path}`).toBe('');
          expect(shown.note, `${params.tool} ${path}`).toContain('is outside the workdir');
          expect(JSON.stringify(shown)).not.toContain('SECRET');
        }
      }
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });

  it('does not show a file the read_file rules deny, for an edit or an overwrite', async () => {
    await using box = await createToolSandbox();
    await writeFile(join(box.workdir, 'app.env'), 'KEY=hunter2\n');
    const readRules = [
      { pattern: '*', action: 'allow' as const },
      { pattern: '*.env', action: 'deny' as const },
    ];
    for (const params of [
      { tool: 'edit_file', args: { path: 'app.env', oldString: 'KEY=hunter2', newString: 'KEY=x' }, readRules },
      { tool: 'write_file', args: { path: 'app.env', content: 'KEY=x\n' }, readRules },
    ] as const) {
      const shown = await preview(box, params);
      expect(shown).toEqual({
        path: 'app.env',
        diff: '',
        truncated: false,
        note: 'The read_file rules do not let app.env be shown, so no diff is.',
      });
    }
    // The tool's own result hides it the same way when it runs with those rules.
    const result = await box.run(
      editFileTool,
      { path: 'app.env', oldString: 'KEY=hunter2', newString: 'KEY=x' },
      { isReadDenied: createReadDenial(readRules) },
    );
    expect(result.diff?.note).toBe('The read_file rules do not let app.env be shown, so no diff is.');
    expect(JSON.stringify(result)).not.toContain('hunter2');
  });

  it('refuses the worker’s own .molf directory as the tool does', async () => {
    await using box = await createToolSandbox();
    const shown = await preview(box, { tool: 'write_file', args: { path: '.molf/worker.json', content: '{}' } });
    expect(shown.note).toContain('in the worker’s own .molf directory');
    expect(shown.diff).toBe('');
  });

  it('says the call would fail on a file changed since the session read it', async () => {
    await using box = await createToolSandbox();
    const file = join(box.workdir, 'a.txt');
    await writeFile(file, 'one\n');
    await box.run(readFileTool, { path: 'a.txt' }, { sessionId: 's1' });
    await writeFile(file, 'two, changed by someone else\n');
    await utimes(file, new Date(), new Date(Date.now() + 5_000));
    const shown = await preview(box, {
      tool: 'edit_file',
      args: { path: 'a.txt', oldString: 'two', newString: '2' },
      sessionId: 's1',
    });
    expect(shown.note).toContain('changed on disk since you last read it');
  });

  it('gives a file over the size limit a note without reading it, and bad arguments their error', async () => {
    await using box = await createToolSandbox();
    await writeFile(join(box.workdir, 'big.txt'), 'x'.repeat(4096));
    const big = await preview(
      box,
      { tool: 'edit_file', args: { path: 'big.txt', oldString: 'x', newString: 'y', replaceAll: true } },
      { maxFileBytes: 1024 },
    );
    expect(big).toEqual({
      path: 'big.txt',
      diff: '',
      truncated: true,
      note: 'big.txt is 4 KB, over the 1 KB a diff covers; no diff is shown.',
    });
    const bad = await preview(box, { tool: 'edit_file', args: { path: 'big.txt', oldString: 'x' } });
    expect(bad.note).toContain('send either oldString and newString, or edits');
  });

  it('notes a binary file instead of showing it', async () => {
    await using box = await createToolSandbox();
    await writeFile(join(box.workdir, 'logo.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 1]));
    const overwrite = await preview(box, { tool: 'write_file', args: { path: 'logo.png', content: 'text' } });
    expect(overwrite.note).toBe('logo.png is a binary file; no diff is shown.');
    const edit = await preview(box, { tool: 'edit_file', args: { path: 'logo.png', oldString: 'P', newString: 'Q' } });
    expect(edit.note).toBe('The call would fail: logo.png looks like a binary file; edit_file changes text only.');
  });

  it('shows a write_file result with the same diff its preview showed', async () => {
    await using box = await createToolSandbox();
    await writeFile(join(box.workdir, 'a.txt'), 'a\nb\n');
    const args = { path: 'a.txt', content: 'a\nc\n' };
    const { path: _path, ...shown } = await preview(box, { tool: 'write_file', args });
    const result = await box.run(writeFileTool, args);
    expect(result.diff).toEqual(shown);
    expect(result.diff?.diff).toContain('-b\n+c\n');
  });
});

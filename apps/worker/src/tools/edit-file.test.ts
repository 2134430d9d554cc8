import { chmod, mkdir, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { editFileTool } from './edit-file.ts';
import { createToolSandbox } from './tool-test-kit.ts';

describe('edit_file', () => {
  it('replaces a unique exact match and reports the count', async () => {
    await using box = await createToolSandbox();
    await writeFile(join(box.workdir, 'a.ts'), 'const a = 1;\nconst b = 2;\n');
    const result = await box.run(editFileTool, { path: 'a.ts', oldString: 'const b = 2;', newString: 'const b = 3;' });
    expect(result.output).toBe('Edited a.ts: 1 replacement.');
    expect(await readFile(join(box.workdir, 'a.ts'), 'utf8')).toBe('const a = 1;\nconst b = 3;\n');
  });

  it("writes $&, $' and $$ in newString literally", async () => {
    await using box = await createToolSandbox();
    await writeFile(join(box.workdir, 'a.sh'), 'echo NAME; tail');
    await box.run(editFileTool, { path: 'a.sh', oldString: 'NAME', newString: "$& $' $$ $1" });
    expect(await readFile(join(box.workdir, 'a.sh'), 'utf8')).toBe("echo $& $' $$ $1; tail");
  });

  it('fails with the count when the match is not unique, unless replaceAll', async () => {
    await using box = await createToolSandbox();
    await writeFile(join(box.workdir, 'a.txt'), 'x x x');
    const ambiguous = await box.run(editFileTool, { path: 'a.txt', oldString: 'x', newString: 'y' });
    expect(ambiguous.meta?.errorKind).toBe('multiple_matches');
    expect(ambiguous.error).toContain('occurs 3 times');
    const all = await box.run(editFileTool, { path: 'a.txt', oldString: 'x', newString: 'y', replaceAll: true });
    expect(all.output).toBe('Edited a.txt: 3 replacements.');
    expect(await readFile(join(box.workdir, 'a.txt'), 'utf8')).toBe('y y y');
  });

  it('refuses empty, identical and missing strings', async () => {
    await using box = await createToolSandbox();
    await writeFile(join(box.workdir, 'a.txt'), 'abc');
    const kinds = await Promise.all(
      [
        { oldString: '', newString: 'x' },
        { oldString: 'a', newString: 'a' },
        { oldString: 'zzz', newString: 'x' },
      ].map(async (edit) => (await box.run(editFileTool, { path: 'a.txt', ...edit })).meta?.errorKind),
    );
    expect(kinds).toEqual(['invalid_arguments', 'invalid_arguments', 'no_match']);
    expect(await readFile(join(box.workdir, 'a.txt'), 'utf8')).toBe('abc');
  });

  it('edits a CRLF file from LF strings and keeps its line endings and mode', async () => {
    await using box = await createToolSandbox();
    const file = join(box.workdir, 'win.txt');
    await writeFile(file, 'one\r\ntwo\r\nthree\r\n');
    await chmod(file, 0o600);
    await box.run(editFileTool, { path: 'win.txt', oldString: 'one\ntwo', newString: 'one\n2\nmore' });
    expect(await readFile(file, 'utf8')).toBe('one\r\n2\r\nmore\r\nthree\r\n');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
  });

  it('applies several edits in order, all or nothing', async () => {
    await using box = await createToolSandbox();
    await writeFile(join(box.workdir, 'a.txt'), 'alpha beta gamma');
    const failed = await box.run(editFileTool, {
      path: 'a.txt',
      edits: [
        { oldString: 'alpha', newString: 'A' },
        { oldString: 'missing', newString: 'B' },
      ],
    });
    expect(failed.meta?.errorKind).toBe('no_match');
    expect(failed.error).toContain('edit 2 of 2');
    expect(await readFile(join(box.workdir, 'a.txt'), 'utf8')).toBe('alpha beta gamma');

    const applied = await box.run(editFileTool, {
      path: 'a.txt',
      edits: [
        { oldString: 'alpha', newString: 'A' },
        { oldString: 'A beta', newString: 'AB' },
      ],
    });
    expect(applied.output).toBe('Edited a.txt: 2 replacements in 2 edits.');
    expect(await readFile(join(box.workdir, 'a.txt'), 'utf8')).toBe('AB gamma');
  });

  it('refuses a file that is not valid UTF-8 instead of corrupting it', async () => {
    await using box = await createToolSandbox();
    const file = join(box.workdir, 'latin1.txt');
    const bytes = Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a, 0x78, 0x0a]);
    await writeFile(file, bytes);
    const result = await box.run(editFileTool, { path: 'latin1.txt', oldString: 'x', newString: 'y' });
    expect(result.meta?.errorKind).toBe('binary');
    expect(await readFile(file)).toEqual(bytes);
  });

  it('needs either oldString/newString or edits', () => {
    expect(editFileTool.definition.args.safeParse({ path: 'a', oldString: 'x' }).success).toBe(false);
    expect(
      editFileTool.definition.args.safeParse({ path: 'a', oldString: 'x', newString: 'y', edits: [] }).success,
    ).toBe(false);
  });

  it('never edits a file in the worker’s .molf directory, however the path leads there', async () => {
    await using box = await createToolSandbox();
    const identity = join(box.workdir, '.molf', 'worker.json');
    await mkdir(join(box.workdir, '.molf'));
    await writeFile(identity, '{"workerId": "w1"}');
    await mkdir(join(box.workdir, 'x'));
    await symlink(identity, join(box.workdir, 'link.json'));
    for (const path of ['.molf/worker.json', './x/../.molf/worker.json', 'link.json']) {
      const result = await box.run(editFileTool, { path, oldString: 'w1', newString: 'w2' });
      expect(result.meta?.errorKind, path).toBe('permission_denied');
      expect(result.error, path).toContain('worker’s own .molf directory');
    }
    expect(await readFile(identity, 'utf8')).toBe('{"workerId": "w1"}');
  });
});

import { utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { editFileTool } from './edit-file.ts';
import { readFileTool } from './read-file.ts';
import { createToolSandbox } from './tool-test-kit.ts';
import { writeFileTool } from './write-file.ts';

describe('stale-file guard and read-before-write', () => {
  it('refuses an edit when the file changed on disk since the session read it', async () => {
    await using box = await createToolSandbox();
    const file = join(box.workdir, 'a.txt');
    await writeFile(file, 'one\n');
    await box.run(readFileTool, { path: 'a.txt' }, { sessionId: 's1' });
    // Someone else changes it.
    await writeFile(file, 'one\nand more\n');
    const refused = await box.run(
      editFileTool,
      { path: 'a.txt', oldString: 'one', newString: 'two' },
      { sessionId: 's1' },
    );
    expect(refused.meta?.errorKind).toBe('stale_file');
    expect(refused.error).toContain('Read it again');

    // After reading again, the edit goes through, and the session's own edit counts as seen.
    await box.run(readFileTool, { path: 'a.txt' }, { sessionId: 's1' });
    expect(
      (await box.run(editFileTool, { path: 'a.txt', oldString: 'one', newString: 'two' }, { sessionId: 's1' })).error,
    ).toBeUndefined();
    expect(
      (await box.run(editFileTool, { path: 'a.txt', oldString: 'two', newString: 'three' }, { sessionId: 's1' })).error,
    ).toBeUndefined();
  });

  it('keeps sessions apart and refuses an overwrite of a changed file too', async () => {
    await using box = await createToolSandbox();
    const file = join(box.workdir, 'a.txt');
    await writeFile(file, 'v1');
    await box.run(readFileTool, { path: 'a.txt' }, { sessionId: 's1' });
    await writeFile(file, 'v2 by someone else');
    await utimes(file, new Date(), new Date(Date.now() + 5_000));
    expect((await box.run(writeFileTool, { path: 'a.txt', content: 'v3' }, { sessionId: 's1' })).meta?.errorKind).toBe(
      'stale_file',
    );
    // A session that never read it isn't held to anything (unless the worker requires reads).
    expect((await box.run(writeFileTool, { path: 'a.txt', content: 'v3' }, { sessionId: 's2' })).error).toBeUndefined();
  });

  it('requires a read before changing an existing file when the worker asks for it', async () => {
    await using box = await createToolSandbox({ requireRead: true });
    await writeFile(join(box.workdir, 'a.txt'), 'x');
    expect((await box.run(editFileTool, { path: 'a.txt', oldString: 'x', newString: 'y' })).meta?.errorKind).toBe(
      'read_required',
    );
    expect((await box.run(writeFileTool, { path: 'a.txt', content: 'y' })).meta?.errorKind).toBe('read_required');
    // New files need no read.
    expect((await box.run(writeFileTool, { path: 'new.txt', content: 'y' })).error).toBeUndefined();
    await box.run(readFileTool, { path: 'a.txt' });
    expect((await box.run(editFileTool, { path: 'a.txt', oldString: 'x', newString: 'y' })).error).toBeUndefined();
  });
});

import { execFileSync } from 'node:child_process';
import { mkdir, rename, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ReadToolOutputParamsSchema, type ToolOutputPage } from '@molf/protocol';
import { describe, expect, it } from 'vitest';
import { readToolOutput } from './read-tool-output.ts';
import { createToolSandbox } from './tool-test-kit.ts';

const ID = 'tc_0b6f3c1e-52a4-4d0e-9c4e-3b1f2a7d9e10';

async function spill(workdir: string, content: string | Buffer, id = ID): Promise<string> {
  await mkdir(join(workdir, '.molf', 'tool-output'), { recursive: true });
  const path = join(workdir, '.molf', 'tool-output', `${id}.txt`);
  await writeFile(path, content);
  return path;
}

function read(workdir: string, params: { offset?: number; limit?: number; outputId?: string } = {}) {
  return readToolOutput({ workdir, params: ReadToolOutputParamsSchema.parse({ outputId: ID, ...params }) });
}

async function page(workdir: string, params: { offset?: number; limit?: number } = {}): Promise<ToolOutputPage> {
  const result = await read(workdir, params);
  if (!result.ok) throw new Error(result.error.message);
  return result.value;
}

describe('readToolOutput', () => {
  it('reads a spilled output in pages that never split a character and join to the whole text', async () => {
    await using box = await createToolSandbox();
    // 1-, 2-, 3- and 4-byte characters, so that page ends fall inside each kind.
    const text = 'a é € 😀 line\n'.repeat(40);
    await spill(box.workdir, text);
    for (const limit of [1, 2, 3, 5, 7, 64, 1_000]) {
      const pages: string[] = [];
      let offset = 0;
      for (;;) {
        const next = await page(box.workdir, { offset, limit });
        expect(next.offset).toBe(offset);
        expect(Buffer.byteLength(next.text)).toBe(next.bytes);
        expect(next.text).not.toContain('\uFFFD');
        // At least one whole character, and past the limit only to finish the one character.
        expect(next.bytes).toBeGreaterThan(0);
        expect(next.bytes).toBeLessThanOrEqual(Math.max(limit, 4));
        pages.push(next.text);
        offset += next.bytes;
        if (next.done) break;
      }
      expect(pages.join('')).toBe(text);
    }
    expect(await page(box.workdir)).toMatchObject({
      text,
      offset: 0,
      totalBytes: Buffer.byteLength(text),
      done: true,
    });
  });

  it('starts an offset inside a character at the next one', async () => {
    await using box = await createToolSandbox();
    await spill(box.workdir, '😀x');
    expect(await page(box.workdir, { offset: 1 })).toEqual({
      text: 'x',
      offset: 4,
      bytes: 1,
      totalBytes: 5,
      done: true,
    });
    expect(await page(box.workdir, { offset: 99 })).toEqual({
      text: '',
      offset: 5,
      bytes: 0,
      totalBytes: 5,
      done: true,
    });
  });

  it('says the file does not exist when it was deleted or never written', async () => {
    await using box = await createToolSandbox();
    expect(await read(box.workdir)).toMatchObject({ ok: false, error: { kind: 'not_found' } });
    await spill(box.workdir, 'x', 'tc_other');
    expect(await read(box.workdir)).toMatchObject({ ok: false, error: { kind: 'not_found' } });
  });

  it('refuses a symlink planted in place of the file, even to a file in the workdir', async () => {
    await using box = await createToolSandbox();
    await writeFile(join(box.workdir, 'secret.txt'), 'secret');
    const path = await spill(box.workdir, 'real output');
    await rename(path, `${path}.moved`);
    await symlink(join(box.workdir, 'secret.txt'), path);
    const result = await read(box.workdir);
    expect(result).toMatchObject({ ok: false, error: { kind: 'not_regular_file' } });
    expect(JSON.stringify(result)).not.toContain('secret"');
  });

  it('refuses a tool-output folder that is a link to another folder', async () => {
    await using box = await createToolSandbox();
    await mkdir(join(box.workdir, 'elsewhere'));
    await writeFile(join(box.workdir, 'elsewhere', `${ID}.txt`), 'not an output');
    await mkdir(join(box.workdir, '.molf'));
    await symlink(join(box.workdir, 'elsewhere'), join(box.workdir, '.molf', 'tool-output'));
    expect(await read(box.workdir)).toMatchObject({ ok: false, error: { kind: 'permission_denied' } });
  });

  it('refuses a directory or a FIFO in place of the file without waiting for a writer', async () => {
    await using box = await createToolSandbox();
    const path = await spill(box.workdir, 'x');
    await rename(path, `${path}.moved`);
    execFileSync('mkfifo', [path]);
    expect(await read(box.workdir)).toMatchObject({ ok: false, error: { kind: 'not_regular_file' } });
    await rename(path, `${path}.fifo`);
    await mkdir(path);
    expect(await read(box.workdir)).toMatchObject({ ok: false, error: { kind: 'not_regular_file' } });
  });

  it('takes only ids of the tool call id format: no path can be named', () => {
    for (const outputId of ['../worker', 'a/b', '', 'x.txt']) {
      expect(ReadToolOutputParamsSchema.safeParse({ outputId }).success).toBe(false);
    }
    expect(ReadToolOutputParamsSchema.safeParse({ outputId: ID, limit: 1024 * 1024 + 1 }).success).toBe(false);
  });
});

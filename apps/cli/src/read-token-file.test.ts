import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isMolfError } from '@molf/protocol';
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { readTokenFile } from './read-token-file.ts';

const cleanups: Array<() => Promise<unknown>> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function tempDir(): Promise<string> {
  const path = await mkdtemp(join(tmpdir(), 'molf-token-file-'));
  cleanups.push(() => rm(path, { recursive: true, force: true }));
  return path;
}

async function tokenFile(content: string, mode = 0o600): Promise<string> {
  const path = join(await tempDir(), 'token');
  await writeFile(path, content, { mode });
  await chmod(path, mode);
  return path;
}

async function refusal(path: string): Promise<string> {
  try {
    await readTokenFile(path);
  } catch (error) {
    expect(isMolfError(error) && error.code).toBe('config_invalid');
    return (error as Error).message;
  }
  throw new Error('the file was accepted');
}

const TOKEN = 'molf_w_0123456789abcdefghijklmnopqrstuvwxyz';

describe('readTokenFile', () => {
  it.each([
    ['a trailing newline', `${TOKEN}\n`],
    ['a trailing CRLF', `${TOKEN}\r\n`],
    ['no newline', TOKEN],
  ])('reads the token of a file with %s', async (_name, content) => {
    expect(await readTokenFile(await tokenFile(content))).toEqual({ token: TOKEN });
  });

  it('refuses a missing file, naming it', async () => {
    const path = join(await tempDir(), 'nope');
    expect(await refusal(path)).toMatch(new RegExp(`cannot read the token file ${path}: .*no such file`, 'i'));
  });

  it('refuses an empty file or one holding only blank lines', async () => {
    expect(await refusal(await tokenFile(''))).toContain('is empty');
    expect(await refusal(await tokenFile('\n\n'))).toContain('is empty');
  });

  it('refuses a file that holds more than one token on one line', async () => {
    expect(await refusal(await tokenFile(`${TOKEN}\nsecond line\n`))).toContain('only the token');
    expect(await refusal(await tokenFile(`token: ${TOKEN}\n`))).toContain('only the token');
  });

  it('refuses a file far larger than a token (a wrong path), without reading it all', async () => {
    expect(await refusal(await tokenFile('x'.repeat(100_000)))).toContain('larger than');
  });

  it('refuses a directory', async () => {
    const path = join(await tempDir(), 'dir');
    await mkdir(path);
    expect(await refusal(path)).toContain('not a file');
  });

  it('warns, naming the fix, when other users may read the file', async () => {
    const path = await tokenFile(`${TOKEN}\n`, 0o644);
    const read = await readTokenFile(path);
    expect(read.token).toBe(TOKEN);
    expect(read.warning).toBe(`other users can read the token file ${path} (mode 0644): chmod 600 ${path}`);
    expect((await readTokenFile(await tokenFile(`${TOKEN}\n`, 0o640))).warning).toContain('mode 0640');
  });

  it('reads a pipe, as `--token-file <(pass show molf)` gives one', async () => {
    const path = join(await tempDir(), 'fifo');
    await execa('mkfifo', [path]);
    const writer = execa('sh', ['-c', `printf '%s\\n' '${TOKEN}' > '${path}'`]);
    expect(await readTokenFile(path)).toEqual({ token: TOKEN });
    await writer;
  });
});

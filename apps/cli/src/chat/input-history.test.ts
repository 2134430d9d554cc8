import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { HISTORY_LIMIT, openInputHistory } from './input-history.ts';

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});
async function historyFile(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'molf-history-'));
  dirs.push(dir);
  return join(dir, 'state', 'chat-history');
}

describe('the chat input history', () => {
  it('keeps prompts across chats, a multi-line one as one entry, in a file only its owner reads', async () => {
    const file = await historyFile();
    const first = openInputHistory(file);
    first.add('one');
    first.add('two\nlines');
    first.add('two\nlines');
    first.add('   ');
    expect(openInputHistory(file).entries()).toEqual(['one', 'two\nlines']);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
  });

  it('skips a damaged line and keeps the rest', async () => {
    const file = await historyFile();
    openInputHistory(file).add('kept');
    await writeFile(file, `${await readFile(file, 'utf8')}{"torn\n"after"\n`);
    expect(openInputHistory(file).entries()).toEqual(['kept', 'after']);
  });

  it('cuts a file grown to twice the limit back to the newest prompts', async () => {
    const file = await historyFile();
    openInputHistory(file).add('seed');
    await writeFile(
      file,
      Array.from({ length: 2 * HISTORY_LIMIT }, (_, index) => `${JSON.stringify(`p${index}`)}\n`).join(''),
    );
    const history = openInputHistory(file);
    expect(history.entries()).toHaveLength(HISTORY_LIMIT);
    expect(history.entries().at(-1)).toBe(`p${2 * HISTORY_LIMIT - 1}`);
    expect((await readFile(file, 'utf8')).split('\n').filter(Boolean)).toHaveLength(HISTORY_LIMIT);
  });

  it('works without a file, and loses only the history when the file cannot be written', async () => {
    const memory = openInputHistory(undefined);
    memory.add('x');
    expect(memory.entries()).toEqual(['x']);
    // A file where its directory should be: nothing can be created under it.
    const blocker = await historyFile();
    await writeFile(join(blocker, '..', '..', 'blocker'), '');
    const unwritable = openInputHistory(join(blocker, '..', '..', 'blocker', 'history'));
    unwritable.add('y');
    expect(unwritable.entries()).toEqual(['y']);
  });
});

import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type FakeTurn, startFakeLlm } from '@molf/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { type Cleanups, spawnMolf, stopSpawnedProcesses, writeFakeModelConfig } from '../testing/cli-test-kit.ts';

const cleanups: Cleanups = [];

afterEach(async () => {
  await stopSpawnedProcesses();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function tempDir(): Promise<string> {
  const path = await mkdtemp(join(tmpdir(), 'molf-chat-pipe-'));
  cleanups.push(() => rm(path, { recursive: true, force: true }));
  return path;
}

/** `molf chat` with `input` piped to it (then stdin closed), its own server and worker, the fake LLM answering `turns`. */
async function chatOnPipe(turns: FakeTurn[], input: string, args: string[] = []) {
  const llm = await startFakeLlm({ turns });
  cleanups.push(() => llm.close());
  const home = await tempDir();
  await writeFakeModelConfig(home, llm.baseURL);
  const result = await spawnMolf(['chat', ...args], {
    cwd: await tempDir(),
    env: { MOLF_HOME: home, MOLF_LOG_FILE: 'none' },
    input,
  });
  return { llm, home, result };
}

/** The messages of each session the embedded server of `home` stored, by session. */
async function storedMessageCounts(home: string): Promise<number[]> {
  const dir = join(home, 'sessions');
  const ids = await readdir(dir).catch(() => []);
  return Promise.all(
    ids.map(async (id) => {
      const meta = JSON.parse(await readFile(join(dir, id, 'meta.json'), 'utf8')) as { messageCount: number };
      return meta.messageCount;
    }),
  );
}

describe('molf chat on a pipe', () => {
  it('answers the prompts a script pipes to it before leaving at the end of its input', async () => {
    const { llm, home, result } = await chatOnPipe(
      [{ text: 'First answer.' }, { text: 'Second answer.' }],
      'first question\nsecond question\n',
    );
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain('First answer.');
    expect(result.stdout).toContain('Second answer.');
    expect(result.stdout).not.toContain('invalid input');
    expect(llm.requests).toHaveLength(2);
    // One session, with both turns in it: none left empty.
    expect(await storedMessageCounts(home)).toEqual([4]);
  });

  it('leaves an approval it can no longer answer waiting, and says so', async () => {
    const { result } = await chatOnPipe(
      [{ toolCalls: [{ name: 'shell_exec', arguments: { command: 'touch never.txt' } }] }],
      'make a file\n',
    );
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain('? shell_exec asks for approval: touch never.txt');
    expect(result.stdout).toContain('(stdin ended with an approval waiting');
  });

  it('removes the unused session it started on /new without telling that a session was deleted', async () => {
    const { home, result } = await chatOnPipe([{ text: 'In the new one.' }], '/new\nhello\n');
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain('new session ');
    expect(result.stdout).toContain('In the new one.');
    expect(result.stdout).not.toContain('this session was deleted');
    expect(await storedMessageCounts(home)).toEqual([2]);
  });

  it('leaves no session behind when its prompts never reach the model (an unknown provider), and leaves at the end of its input', async () => {
    const { home, llm, result } = await chatOnPipe([], 'hi\nagain\n', ['--model', 'nope/x']);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain('unknown provider "nope"');
    expect(llm.requests).toHaveLength(0);
    expect(await storedMessageCounts(home)).toEqual([]);
  });
});

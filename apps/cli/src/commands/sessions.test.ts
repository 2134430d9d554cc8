import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { WorkerId } from '@molf/protocol';
import { type FakeTurn, startFakeLlm } from '@molf/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { saveConnection } from '../connection-store.ts';
import {
  CLI,
  spawnCommand,
  spawnMolf,
  startLocalServer,
  stopSpawnedProcesses,
  waitUntil,
} from '../testing/cli-test-kit.ts';

const cleanups: Array<() => Promise<unknown>> = [];

afterEach(async () => {
  await stopSpawnedProcesses();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function tempDir(): Promise<string> {
  const path = await mkdtemp(join(tmpdir(), 'molf-sessions-'));
  cleanups.push(() => rm(path, { recursive: true, force: true }));
  return path;
}

/** A server with one worker and the fake LLM, and `molf sessions …` run against it with flags. */
async function setup(turns: FakeTurn[] = []) {
  const llm = await startFakeLlm({ turns });
  cleanups.push(() => llm.close());
  const dataDir = await tempDir();
  const project = await tempDir();
  const { server, worker, tokens } = await startLocalServer(cleanups, {
    dataDir,
    workdir: project,
    llmBaseURL: llm.baseURL,
    tokenSuffix: 'sessions-cli-token-0001',
  });
  const env = { MOLF_LOG_FILE: 'none', MOLF_CLIENT_DIR: dataDir };
  const molf = (args: string[]) =>
    spawnMolf(['sessions', ...args, '--server', server.url, '--token', tokens.client], { cwd: project, env });
  /** A session named `name`, newer than every one made before (its time is past theirs). */
  const session = async (name: string, workerId: string = worker.workerId) => {
    const before = Date.now();
    await waitUntil(() => Date.now() > before, { what: 'the clock to move on' });
    return server.sessions.create({ workerId: workerId as WorkerId, name });
  };
  /** A prompt into `sessionId`, answered by the next fake turns; resolves when its turn is over. */
  const prompt = async (sessionId: string, text: string) => {
    await server.agent.prompt({ sessionId, text });
    await waitUntil(() => !server.agent.busy(sessionId), { what: 'the turn to end' });
  };
  return { server, worker, tokens, project, env, dataDir, molf, session, prompt };
}

describe('molf sessions list', () => {
  it('lists sessions last active first, a page at a time, naming the command for the next page', async () => {
    const { molf, session } = await setup();
    const oldest = await session('Oldest');
    const middle = await session('Middle');
    const newest = await session('Newest');

    const first = await molf(['list', '--limit', '2']);
    expect(first.exitCode).toBe(0);
    const rows = first.stdout.split('\n');
    expect(rows[0]).toMatch(/^ID\s+UPDATED\s+MSGS\s+STATUS\s+WORKER\s+NAME$/);
    expect(rows.slice(1, 3).map((row) => row.split(/\s+/)[0])).toEqual([newest.sessionId, middle.sessionId]);
    expect(rows.at(-1)).toBe('1–2 of 3; next page: molf sessions list --offset 2 --limit 2');

    const second = await molf(['--limit', '2', '--offset', '2']);
    expect(second.stdout.split('\n')[1]).toContain(oldest.sessionId);
    expect(second.stdout.split('\n').at(-1)).toBe('3–3 of 3');

    const json = JSON.parse((await molf(['list', '--limit', '2', '--json'])).stdout) as {
      sessions: Array<{ sessionId: string }>;
      total: number;
      nextOffset: number | null;
    };
    expect(json).toMatchObject({ total: 3, nextOffset: 2 });
    expect(json.sessions.map((listed) => listed.sessionId)).toEqual([newest.sessionId, middle.sessionId]);
  });

  it("lists one worker's sessions with --worker (its id or name), and names the workers for an unknown one", async () => {
    const { molf, session, worker } = await setup();
    const mine = await session('Mine');
    await session('Elsewhere', 'another-worker');

    for (const wanted of [worker.workerId, worker.name]) {
      const listed = await molf(['list', '--worker', wanted, '--json']);
      expect(
        (JSON.parse(listed.stdout) as { sessions: Array<{ sessionId: string }> }).sessions.map((s) => s.sessionId),
      ).toEqual([mine.sessionId]);
    }
    const unknown = await molf(['list', '--worker', 'nosuch']);
    expect(unknown.exitCode).toBe(1);
    expect(unknown.stderr).toContain(`no worker nosuch; the workers: ${worker.name} (${worker.workerId})`);
  });

  it('reaches the server through the connection `molf up` saved for the directory, without flags', async () => {
    const { server, tokens, project, env, session } = await setup();
    const saved = await session('Saved connection');
    await saveConnection({ projectDir: project, url: server.url, token: tokens.client, env });
    const result = await spawnMolf(['sessions'], { cwd: project, env });
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain(saved.sessionId);
  });

  it('exits 2 on a bad --limit', async () => {
    const { molf } = await setup();
    const result = await molf(['list', '--limit', '0']);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('give a whole number from 1 to 200');
  });
});

describe('molf sessions show', () => {
  it("prints a session's history as the chat does on resume, its end first with the way to older messages", async () => {
    const { molf, session, prompt, project } = await setup([
      { text: 'Let me read it.', toolCalls: [{ name: 'read_file', arguments: { path: 'notes.txt' } }] },
      { text: 'It says hi.' },
      { text: 'You are welcome.' },
    ]);
    await writeFile(join(project, 'notes.txt'), 'hi\n');
    const { sessionId } = await session('Notes');
    await prompt(sessionId, 'What does notes.txt say?');
    await prompt(sessionId, 'Thanks');

    const all = await molf(['show', sessionId]);
    expect(all.exitCode).toBe(0);
    expect(all.stdout).toContain(`session ${sessionId}: Notes`);
    expect(all.stdout).toContain(
      ['› What does notes.txt say?', '', 'Let me read it.', '', '✓ read_file notes.txt'].join('\n'),
    );
    expect(all.stdout).toContain(['It says hi.', '', '› Thanks', '', 'You are welcome.'].join('\n'));

    const end = await molf(['show', sessionId, '--limit', '2']);
    expect(end.stdout).toContain(`… 4 earlier messages: molf sessions show ${sessionId} --before 4`);
    expect(end.stdout).not.toContain('What does notes.txt say?');
    expect(end.stdout).toContain('› Thanks');
    const earlier = await molf(['show', sessionId, '--limit', '2', '--before', '4']);
    expect(earlier.stdout).toContain('✓ read_file notes.txt');
    expect(earlier.stdout).toContain(`… 2 later messages: molf sessions show ${sessionId}`);

    const json = JSON.parse((await molf(['show', sessionId, '--json'])).stdout) as { total: number; start: number };
    expect(json).toMatchObject({ total: 6, start: 0 });
  });

  it('fails with exit 1 for an unknown session', async () => {
    const { molf } = await setup();
    const result = await molf(['show', 'no-such-session']);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain('no session no-such-session');
  });
});

describe('molf sessions rename and rm', () => {
  it('renames a session', async () => {
    const { molf, session, server } = await setup();
    const { sessionId } = await session('Old name');
    const result = await molf(['rename', sessionId, 'New name']);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toBe(`renamed session ${sessionId}: New name`);
    expect((await server.sessions.get(sessionId))?.name).toBe('New name');
  });

  it('shows a stored name with control characters escaped, so a name cannot drive the terminal, and refuses to rename to one', async () => {
    const { molf, session, server } = await setup();
    // Stored by an older server, or by a store behind the RPC's checks.
    const { sessionId } = await session('evil \u001b]0;pwned\u0007 name');
    const listed = await molf(['list']);
    expect(listed.stdout).toContain('evil \\x1b]0;pwned\\x07 name');
    expect(listed.stdout).not.toContain('\u001b');
    const renamed = await molf(['rename', sessionId, 'again \u001b[2J']);
    expect(renamed.exitCode).toBe(1);
    expect(renamed.stderr).toContain('a session name holds no control characters');
    expect(renamed.stdout).not.toContain('\u001b');
    expect((await server.sessions.get(sessionId))?.name).toBe('evil \u001b]0;pwned\u0007 name');
  });

  it('removes with --yes, needs it when stdin is not a terminal, and removes nothing when one id is unknown', async () => {
    const { molf, session, server } = await setup();
    const { sessionId } = await session('To remove');

    const unasked = await molf(['rm', sessionId]);
    expect(unasked.exitCode).toBe(2);
    expect(unasked.stderr).toContain('pass --yes to remove without asking');

    const typo = await molf(['rm', sessionId, 'no-such-session', '--yes']);
    expect(typo.exitCode).toBe(1);
    expect(await server.sessions.get(sessionId)).toBeDefined();

    const removed = await molf(['rm', sessionId, '--yes']);
    expect(removed.exitCode).toBe(0);
    expect(removed.stdout).toBe(`removed session ${sessionId} (To remove)`);
    expect(await server.sessions.get(sessionId)).toBeUndefined();
  });

  it('asks on a terminal first: no keeps the session, yes removes it', async () => {
    const { server, tokens, project, env, session } = await setup();
    const { sessionId } = await session('Asked about');
    const command = [
      process.execPath,
      CLI,
      'sessions',
      'rm',
      sessionId,
      '--server',
      server.url,
      '--token',
      tokens.client,
    ]
      .map((word) => `'${word.replaceAll("'", "'\\''")}'`)
      .join(' ');
    // `script` gives the command a terminal; what is written to its stdin is typed there.
    const answer = async (typed: string) => {
      const child = spawnCommand('script', ['-qec', command, '/dev/null'], { cwd: project, env, stdin: 'pipe' });
      let output = '';
      child.stdout?.on('data', (chunk: Buffer) => {
        output += chunk.toString();
      });
      await waitUntil(() => output.includes('[y/N]'), { what: () => `the question in:\n${output}` });
      child.stdin?.write(`${typed}\n`);
      const result = await child;
      return { result, output };
    };

    const kept = await answer('n');
    expect(kept.output).toContain(`${sessionId}  0 messages  Asked about`);
    expect(kept.output).toContain('nothing removed');
    expect(await server.sessions.get(sessionId)).toBeDefined();

    const removed = await answer('y');
    expect(removed.result.exitCode).toBe(0);
    expect(removed.output).toContain(`removed session ${sessionId}`);
    expect(await server.sessions.get(sessionId)).toBeUndefined();
  });
});

import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type FakeLlm, type FakeTurn, FIXTURE_MCP_SERVER, startFakeLlm } from '@molf/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { spawnMolf, startLocalServer, stopSpawnedProcesses, waitUntil } from '../testing/cli-test-kit.ts';

const cleanups: Array<() => Promise<unknown>> = [];

afterEach(async () => {
  // The processes first: the cleanups remove directories they use.
  await stopSpawnedProcesses();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function tempDir(): Promise<string> {
  const path = await mkdtemp(join(tmpdir(), 'molf-run-'));
  cleanups.push(() => rm(path, { recursive: true, force: true }));
  return path;
}

async function setup(turns: FakeTurn[], options: { model?: boolean } = {}) {
  const llm: FakeLlm = await startFakeLlm({ turns });
  cleanups.push(() => llm.close());
  const home = await tempDir();
  const project = await tempDir();
  await writeFile(
    join(home, 'config.jsonc'),
    JSON.stringify({
      ...(options.model === false ? {} : { model: 'fake/m' }),
      providers: { fake: { baseURL: llm.baseURL } },
    }),
  );
  const run = (args: string[]) =>
    spawnMolf(['run', ...args], {
      cwd: project,
      env: { MOLF_HOME: home, MOLF_LOG_FILE: 'none', MOLF_CLIENT_DIR: home },
    });
  return { llm, home, project, run };
}

/** A `task` call of the parent model, starting a subagent whose requests contain `prompt`. */
function taskCall(agent: string, prompt: string): FakeTurn {
  return { toolCalls: [{ name: 'task', arguments: { agent, description: `job for ${agent}`, prompt } }] };
}

/** A server and worker of the test's own whose rules allow the task tool, so that only the child asks. */
async function serverAllowingTasks(turns: FakeTurn[]) {
  const llm = await startFakeLlm({ turns });
  cleanups.push(() => llm.close());
  const dataDir = await tempDir();
  const project = await tempDir();
  const { server, worker, tokens } = await startLocalServer(cleanups, {
    dataDir,
    workdir: project,
    llmBaseURL: llm.baseURL,
    tokenSuffix: 'run-subagent-token-0001',
  });
  await server.permissions.writeText(
    worker.workerId,
    JSON.stringify({ '*': 'ask', read_file: 'allow', task: 'allow', shell_exec: 'ask' }),
  );
  const run = (args: string[]) =>
    spawnMolf(['run', ...args, '--server', server.url, '--token', tokens.client], {
      cwd: project,
      env: { MOLF_LOG_FILE: 'none', MOLF_CLIENT_DIR: dataDir },
    });
  return { llm, server, project, run };
}

describe('molf run', () => {
  it('starts an embedded server and worker, streams the answer to stdout and exits 0', async () => {
    const { run, llm } = await setup([{ text: ['Hello ', 'from the fake.'] }]);
    const result = await run(['Say hello']);
    expect(result.stderr).toMatch(/session: \S+/);
    expect(result.stdout).toBe('Hello from the fake.');
    expect(result.exitCode).toBe(0);
    expect(llm.requests[0]?.messages.at(-1)).toEqual({ role: 'user', content: 'Say hello' });
  });

  it('denies asks by default and tells the model why, never hanging', async () => {
    const { run, llm, project } = await setup([
      { toolCalls: [{ name: 'shell_exec', arguments: { command: 'touch made-by-run.txt' } }] },
      { text: 'I could not run it.' },
    ]);
    const result = await run(['make a file']);
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toContain('[denied by --on-ask deny] shell_exec: touch made-by-run.txt');
    expect(String(llm.requests[1]?.messages.find((message) => message.role === 'tool')?.content)).toContain(
      'no person is watching',
    );
    await expect(readFile(join(project, 'made-by-run.txt'))).rejects.toThrow();
  });

  it('runs asked calls with --on-ask allow', async () => {
    const { run, project } = await setup([
      { toolCalls: [{ name: 'shell_exec', arguments: { command: 'echo ran > made-by-run.txt' } }] },
      { text: 'done' },
    ]);
    const result = await run(['make a file', '--on-ask', 'allow']);
    expect(result.exitCode).toBe(0);
    expect(await readFile(join(project, 'made-by-run.txt'), 'utf8')).toBe('ran\n');
  });

  it('exits 2 with --on-ask fail when the gate asks', async () => {
    const { run } = await setup([
      { toolCalls: [{ name: 'shell_exec', arguments: { command: 'echo hi' } }] },
      { text: 'never' },
    ]);
    const result = await run(['x', '--on-ask', 'fail']);
    expect(result.exitCode).toBe(2);
  });

  it('prints one JSON event per line with --json', async () => {
    const { run } = await setup([{ text: ['a', 'b'] }]);
    const result = await run(['x', '--json']);
    const events = result.stdout
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; seq: number; text?: string });
    // Deltas that arrive in one tick are published as one event: the chunks may come merged.
    const types = events.map((event) => event.type);
    expect(types.filter((type, index) => type !== 'message.delta' || types[index - 1] !== type)).toEqual([
      'turn.started',
      'message.delta',
      'message.completed',
      'turn.ended',
    ]);
    expect(events.map((event) => (event.type === 'message.delta' ? event.text : '')).join('')).toBe('ab');
    expect(result.exitCode).toBe(0);
  });

  it('exits 1 with the reason on a provider error or without a model', async () => {
    const failing = await setup([{ error: { status: 401, message: 'invalid api key' } }]);
    const result = await failing.run(['x']);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain('invalid api key');

    const unset = await setup([], { model: false });
    const none = await unset.run(['x']);
    expect(none.exitCode).toBe(1);
    expect(none.stderr).toContain('--model provider/model');
  });

  it("with --server and --session prints only its own turn, not the session's earlier answers", async () => {
    const llm = await startFakeLlm({ turns: [{ text: 'ANSWER-ONE' }, { text: 'ANSWER-TWO' }] });
    cleanups.push(() => llm.close());
    const dataDir = await tempDir();
    const project = await tempDir();
    const { server, worker, tokens } = await startLocalServer(cleanups, {
      dataDir,
      workdir: project,
      llmBaseURL: llm.baseURL,
      tokenSuffix: 'run-server-test-token-1',
    });
    const session = await server.sessions.create({ workerId: worker.workerId });
    await server.agent.prompt({ sessionId: session.sessionId, text: 'first' });
    await waitUntil(() => !server.agent.busy(session.sessionId), { what: 'the first turn to end' });

    const result = await spawnMolf(
      ['run', 'second', '--server', server.url, '--token', tokens.client, '--session', session.sessionId],
      { cwd: project, env: { MOLF_LOG_FILE: 'none', MOLF_CLIENT_DIR: dataDir } },
    );
    expect(result.stdout).toBe('ANSWER-TWO');
    expect(result.exitCode).toBe(0);

    const unknown = await spawnMolf(
      ['run', 'x', '--server', server.url, '--token', tokens.client, '--session', 'no-such-session'],
      { cwd: project, env: { MOLF_LOG_FILE: 'none', MOLF_CLIENT_DIR: dataDir } },
    );
    expect(unknown.exitCode).toBe(1);
    expect(unknown.stderr).toContain('no session no-such-session');
    expect(unknown.stderr).not.toContain('    at ');
  });

  it.each([
    { policy: 'deny', line: '[denied by --on-ask deny] MCP server fixture: ', starts: false },
    { policy: 'allow', line: '[approved by --on-ask allow] MCP server fixture: ', starts: true },
  ] as const)(
    "answers its own worker's new MCP server by --on-ask $policy too (started: $starts)",
    async ({ policy, line, starts }) => {
      // The turn stalls, so the run lasts until the test has seen the server's approval answered.
      const { run, project } = await setup([{ text: ['thinking ', 'forever'], stallAfterChunks: 2 }]);
      const startedFile = join(project, 'fixture-starts.log');
      await writeFile(
        join(project, '.mcp.json'),
        JSON.stringify({
          mcpServers: {
            fixture: {
              command: process.execPath,
              args: [FIXTURE_MCP_SERVER],
              env: { FIXTURE_MCP_STARTED_FILE: startedFile },
            },
          },
        }),
      );
      const child = run(['think', '--on-ask', policy]);
      let stderr = '';
      let stdout = '';
      child.stderr?.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
      });
      child.stdout?.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
      });
      // The turn is running (so Ctrl-C aborts it) once its first words are out.
      await waitUntil(
        () => stdout.includes('thinking') && stderr.includes(line) && (!starts || existsSync(startedFile)),
        { what: () => `"${line}" (and the start) in:\n${stderr}` },
      );
      child.kill('SIGINT');
      expect((await child).exitCode).toBe(130);
      expect(existsSync(startedFile)).toBe(starts);
    },
  );

  describe('with subagents', () => {
    it("prints the child's events wrapped in subagent.event with --json, each a line of the parent's stream", async () => {
      const { run } = await setup([
        taskCall('explore', 'CHILD-JSON: list the files'),
        { match: 'CHILD-JSON', toolCalls: [{ name: 'glob', arguments: { pattern: '*' } }] },
        { match: 'CHILD-JSON', text: 'nothing here' },
        { text: 'the explorer found nothing' },
      ]);
      const result = await run(['look around', '--json', '--on-ask', 'allow']);
      expect(result.exitCode).toBe(0);
      const events = result.stdout.split('\n').map(
        (line) =>
          JSON.parse(line) as {
            type: string;
            seq: number;
            sessionId: string;
            agent?: string;
            childSessionId?: string;
            event?: { type: string; toolName?: string; sessionId: string };
          },
      );
      const [first] = events;
      // Every line is an event of the parent's stream, in its order.
      expect(events.every((event) => event.sessionId === first?.sessionId)).toBe(true);
      expect(events.map((event) => event.seq)).toEqual([...events.map((event) => event.seq)].sort((a, b) => a - b));
      const wrapped = events.filter((event) => event.type === 'subagent.event');
      expect(wrapped.map((event) => event.event?.type)).toContain('turn.started');
      expect(wrapped.find((event) => event.event?.type === 'tool-call.started')).toMatchObject({
        agent: 'explore',
        event: { toolName: 'glob', sessionId: wrapped[0]?.childSessionId },
      });
      expect(wrapped[0]?.childSessionId).not.toBe(first?.sessionId);
      expect(events.at(-1)).toMatchObject({ type: 'turn.ended', reason: 'completed' });
    });

    it("answers a child's ask with --on-ask allow, showing the child's tool call tagged on stderr", async () => {
      const { run, project, llm } = await setup([
        taskCall('general', 'CHILD-ALLOW: make the file'),
        {
          match: 'CHILD-ALLOW',
          toolCalls: [{ name: 'shell_exec', arguments: { command: 'echo child-ran > from-child.txt' } }],
        },
        { match: 'CHILD-ALLOW', text: 'the file is made' },
        { text: 'the helper made it' },
      ]);
      const result = await run(['delegate', '--on-ask', 'allow']);
      expect(result.exitCode).toBe(0);
      expect(result.stdout).toBe('the helper made it');
      expect(result.stderr).toContain('[general › shell_exec] {"command":"echo child-ran > from-child.txt"}');
      expect(result.stderr).toContain('[approved by --on-ask allow] general › shell_exec: echo child-ran');
      expect(await readFile(join(project, 'from-child.txt'), 'utf8')).toBe('child-ran\n');
      const task = llm.requests.at(-1)?.messages.find((message) => message.role === 'tool');
      expect(String(task?.content)).toContain('the file is made');
    });

    it("denies a child's ask with --on-ask deny; the child hears why and the run completes", async () => {
      const { run, project, llm } = await serverAllowingTasks([
        taskCall('general', 'CHILD-DENY: make the file'),
        {
          match: 'CHILD-DENY',
          toolCalls: [{ name: 'shell_exec', arguments: { command: 'echo child-ran > from-child.txt' } }],
        },
        { match: 'CHILD-DENY', text: 'I was not allowed' },
        { text: 'the helper could not' },
      ]);
      const result = await run(['delegate']);
      expect(result.exitCode).toBe(0);
      expect(result.stdout).toBe('the helper could not');
      expect(result.stderr).toContain('[denied by --on-ask deny] general › shell_exec: echo child-ran');
      expect(existsSync(join(project, 'from-child.txt'))).toBe(false);
      const childRequest = llm.requests.find((request) =>
        JSON.stringify(request.messages).includes('no person is watching'),
      );
      expect(JSON.stringify(childRequest?.messages)).toContain('CHILD-DENY');
    });

    it('exits 2 and aborts the parent turn with --on-ask fail when a child asks', async () => {
      const { run } = await serverAllowingTasks([
        taskCall('general', 'CHILD-FAIL: say hi'),
        { match: 'CHILD-FAIL', toolCalls: [{ name: 'shell_exec', arguments: { command: 'echo hi' } }] },
        { match: 'CHILD-FAIL', text: 'never' },
        { text: 'never either' },
      ]);
      const result = await run(['delegate', '--on-ask', 'fail', '--json']);
      expect(result.exitCode).toBe(2);
      expect(result.stderr).toContain('[denied by --on-ask fail] general › shell_exec: echo hi');
      const last = JSON.parse(result.stdout.split('\n').at(-1) ?? '') as unknown;
      expect(last).toMatchObject({ type: 'turn.ended', reason: 'aborted' });
    });
  });
});

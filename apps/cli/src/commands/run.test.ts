import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type FakeLlm, type FakeTurn, FIXTURE_MCP_SERVER, startFakeLlm } from '@molf/testkit';
import { afterEach, describe, expect, it } from 'vitest';
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
  // The processes first: the cleanups remove directories they use.
  await stopSpawnedProcesses();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function tempDir(): Promise<string> {
  const path = await mkdtemp(join(tmpdir(), 'molf-run-'));
  cleanups.push(() => rm(path, { recursive: true, force: true }));
  return path;
}

async function setup(turns: FakeTurn[], options: { model?: boolean; config?: Record<string, unknown> } = {}) {
  const llm: FakeLlm = await startFakeLlm({ turns });
  cleanups.push(() => llm.close());
  const home = await tempDir();
  const project = await tempDir();
  await writeFile(
    join(home, 'config.jsonc'),
    JSON.stringify({
      ...(options.model === false ? {} : { model: 'fake/m' }),
      providers: { fake: { baseURL: llm.baseURL } },
      ...options.config,
    }),
  );
  const run = (args: string[], runOptions: { input?: string } = {}) =>
    spawnMolf(['run', ...args], {
      cwd: project,
      env: { MOLF_HOME: home, MOLF_LOG_FILE: 'none', MOLF_CLIENT_DIR: home },
      ...runOptions,
    });
  return { llm, home, project, run };
}

/** The sessions the embedded server of `home` (its data dir) keeps. */
async function storedSessions(home: string): Promise<string[]> {
  return readdir(join(home, 'sessions')).catch(() => []);
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

  it('ends the answer with a newline, so that the shell prompt after it starts a line of its own', async () => {
    const { run } = await setup([{ text: ['Hello ', 'from the fake.'] }, { text: 'Second line\n' }]);
    const first = run(['Say hello']);
    let stdout = '';
    first.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    await first;
    expect(stdout).toBe('Hello from the fake.\n');
    // An answer that ends its own line gets no blank line after it.
    const second = run(['Again']);
    let again = '';
    second.stdout?.on('data', (chunk: Buffer) => {
      again += chunk.toString();
    });
    await second;
    expect(again).toBe('Second line\n');
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

  it('prints one JSON event per line with --json, then the result', async () => {
    const { run } = await setup([{ text: ['a', 'b'] }]);
    const result = await run(['x', '--json']);
    const lines = result.stdout
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; seq: number; text?: string; name?: string });
    const events = lines.slice(0, -1);
    // Deltas that arrive in one tick are published as one event: the chunks may come merged. The
    // session's title (from the prompt) comes in its own time.
    const types = events.map((event) => event.type).filter((type) => type !== 'session.renamed');
    expect(types.filter((type, index) => type !== 'message.delta' || types[index - 1] !== type)).toEqual([
      'turn.started',
      'message.delta',
      'message.completed',
      'turn.ended',
    ]);
    expect(events.map((event) => (event.type === 'message.delta' ? event.text : '')).join('')).toBe('ab');
    expect(lines.at(-1)).toMatchObject({ type: 'result', answer: 'ab', exitReason: 'completed', exitCode: 0 });
    expect(result.exitCode).toBe(0);
  });

  it('exits 1 with the reason on a provider error or without a model, leaving no empty session', async () => {
    const failing = await setup([{ error: { status: 401, message: 'invalid api key' } }]);
    const result = await failing.run(['x', '--json']);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain('invalid api key');
    expect(result.stderr).toMatch(/the new session \S+ was removed: the prompt never reached the model/);
    expect(JSON.parse(result.stdout.split('\n').at(-1) ?? '')).toMatchObject({
      type: 'result',
      sessionId: null,
      exitReason: 'error',
      exitCode: 1,
      error: { message: expect.stringContaining('invalid api key') },
    });
    expect(await storedSessions(failing.home)).toEqual([]);

    const unset = await setup([], { model: false });
    const none = await unset.run(['x']);
    expect(none.exitCode).toBe(1);
    expect(none.stderr).toContain('--model provider/model');
    expect(none.stderr).toContain('was removed');
    expect(await storedSessions(unset.home)).toEqual([]);
  });

  it('removes the session it made when the server refuses the prompt (a bad model id), and says so', async () => {
    const { run, home, llm } = await setup([{ text: 'never' }]);
    const result = await run(['x', '--model', 'no-slash']);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain('a model id is provider/model');
    expect(result.stderr).toContain('was removed: the prompt never reached the model');
    expect(llm.requests).toHaveLength(0);
    expect(await storedSessions(home)).toEqual([]);
  });

  it('keeps the session when the model answered before the turn failed', async () => {
    const { run, home } = await setup([{ text: ['partial ', 'answer'], breakAfterChunks: 2 }]);
    const result = await run(['x']);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).not.toContain('was removed');
    expect(await storedSessions(home)).toHaveLength(1);
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
      const lines = result.stdout.split('\n');
      expect(JSON.parse(lines.at(-1) ?? '')).toMatchObject({ type: 'result', answer: 'the explorer found nothing' });
      const events = lines.slice(0, -1).map(
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
      const [ended, last] = result.stdout
        .split('\n')
        .slice(-2)
        .map((line) => JSON.parse(line) as unknown);
      expect(ended).toMatchObject({ type: 'turn.ended', reason: 'aborted' });
      expect(last).toMatchObject({ type: 'result', exitReason: 'denied', exitCode: 2 });
    });
  });
});

describe('molf run: the prompt from stdin', () => {
  it('takes the prompt from piped stdin when none is given', async () => {
    const { run, llm } = await setup([{ text: 'hi back' }]);
    const result = await run([], { input: 'hi from a pipe\n' });
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toBe('hi back');
    expect(llm.requests[0]?.messages.at(-1)).toEqual({ role: 'user', content: 'hi from a pipe' });
  });

  it('adds piped stdin to a given prompt as fenced context, after a line saying it came from stdin', async () => {
    const { run, llm } = await setup([{ text: 'looks fine' }]);
    const diff = 'diff --git a/x b/x\n+```js\n+x\n+```\n';
    const result = await run(['review this'], { input: diff });
    expect(result.exitCode).toBe(0);
    // The fence is longer than any run of backticks in the text, so the text cannot close it.
    expect(llm.requests[0]?.messages.at(-1)).toEqual({
      role: 'user',
      content: `review this\n\nThe text below was piped to \`molf run\` on stdin:\n\n\`\`\`\`\n${diff.trimEnd()}\n\`\`\`\``,
    });
  });

  it('refuses a stdin larger than it takes with exit 2, before starting anything', async () => {
    const { run, llm, home } = await setup([{ text: 'never' }]);
    const result = await run(['review this'], { input: 'x'.repeat(150_001) });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('stdin is larger than 150,000 bytes');
    expect(llm.requests).toHaveLength(0);
    expect(await storedSessions(home)).toEqual([]);
  });

  it('exits 2 without a prompt when stdin is not piped (/dev/null)', async () => {
    const { run, llm } = await setup([{ text: 'never' }]);
    const result = await run([]);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('no prompt: give one as the argument');
    expect(llm.requests).toHaveLength(0);
  });

  it('never reads a terminal: without a prompt it exits 2 at once instead of waiting for typing', async () => {
    const { home, project } = await setup([]);
    // `script` runs the command on a pseudo-terminal of its own: stdin is a terminal.
    const command = [process.execPath, CLI, 'run'].map((word) => `'${word.replaceAll("'", "'\\''")}'`).join(' ');
    // Its own stdin stays open and silent: a read of the terminal would wait for ever (no EOF comes).
    const result = await spawnCommand('script', ['-qec', command, '/dev/null'], {
      cwd: project,
      env: { MOLF_HOME: home, MOLF_LOG_FILE: 'none', MOLF_CLIENT_DIR: home },
      stdin: 'pipe',
    });
    expect(result.stdout).toContain('no prompt: give one as the argument');
    expect(result.exitCode).toBe(2);
  });
});

describe('molf run: sessions', () => {
  it('continues the last session of this directory with --continue, and says when there is none', async () => {
    const { run, llm } = await setup([{ text: 'noted' }, { text: 'it was 42' }]);
    const none = await run(['what number?', '--continue']);
    expect(none.exitCode).toBe(1);
    expect(none.stderr).toContain('has no session to continue: run without --continue to start one');

    const first = await run(['remember 42']);
    const sessionId = /session: (\S+)/.exec(first.stderr)?.[1];
    expect(sessionId).toBeDefined();
    const second = await run(['what number?', '--continue']);
    expect(second.exitCode).toBe(0);
    expect(second.stdout).toBe('it was 42');
    expect(second.stderr).toContain(`session: ${sessionId}`);
    expect(llm.requests[1]?.messages.slice(-3)).toEqual([
      { role: 'user', content: 'remember 42' },
      { role: 'assistant', content: 'noted' },
      { role: 'user', content: 'what number?' },
    ]);
  });
});

describe('molf run: output for scripts', () => {
  it('ends --json with one result object: the answer, each tool call with its outcome, the usage and the exit', async () => {
    const { run, project } = await setup([
      {
        text: 'Let me look.',
        toolCalls: [
          { name: 'read_file', arguments: { path: 'notes.txt' } },
          { name: 'read_file', arguments: { path: 'missing.txt' } },
          { name: 'shell_exec', arguments: { command: 'touch made.txt' } },
        ],
        usage: { promptTokens: 100, completionTokens: 20 },
      },
      { text: 'Found the note.', usage: { promptTokens: 150, completionTokens: 10 } },
    ]);
    await writeFile(join(project, 'notes.txt'), 'hi\n');
    const result = await run(['look', '--json']);
    expect(result.exitCode).toBe(0);
    const lines = result.stdout.split('\n').map((line) => JSON.parse(line) as { type: string; sessionId?: string });
    expect(lines.filter((line) => line.type === 'result')).toHaveLength(1);
    expect(lines.at(-1)).toEqual({
      type: 'result',
      sessionId: lines[0]?.sessionId,
      answer: 'Found the note.',
      toolCalls: [
        { name: 'read_file', args: { path: 'notes.txt' }, outcome: 'ok' },
        { name: 'read_file', args: { path: 'missing.txt' }, outcome: 'error', error: expect.any(String) },
        {
          name: 'shell_exec',
          args: { command: 'touch made.txt' },
          outcome: 'denied',
          error: expect.stringContaining('no person is watching'),
        },
      ],
      usage: expect.objectContaining({ inputTokens: 250, outputTokens: 30 }),
      exitReason: 'completed',
      exitCode: 0,
    });
  });

  it('prints only the answer with --quiet: the last message, nothing on stderr', async () => {
    const { run } = await setup([
      { text: 'Let me look.', toolCalls: [{ name: 'read_file', arguments: { path: 'notes.txt' } }] },
      { text: 'The file says hi.' },
    ]);
    const result = await run(['what does notes.txt say?', '--quiet']);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toBe('The file says hi.');
    expect(result.stderr).toBe('');
  });

  it('prints each message of the turn as its own paragraph without --quiet', async () => {
    const { run } = await setup([
      { text: 'Let me look.', toolCalls: [{ name: 'read_file', arguments: { path: 'notes.txt' } }] },
      { text: 'The file says hi.' },
    ]);
    const result = await run(['what does notes.txt say?']);
    expect(result.stdout).toBe('Let me look.\n\nThe file says hi.');
  });
});

describe('molf run: exit codes', () => {
  it.each([
    { case: 'an unknown option', args: ['x', '--no-such-flag'], says: "unknown option '--no-such-flag'" },
    {
      case: '--quiet with --json',
      args: ['x', '--quiet', '--json'],
      says: "option '-q, --quiet' cannot be used with option '--json'",
    },
    { case: '--continue with --session', args: ['x', '--continue', '--session', 's'], says: 'cannot be used with' },
    { case: 'a bad --on-ask', args: ['x', '--on-ask', 'maybe'], says: 'use deny, allow or fail' },
  ])('exits 2 on a usage error: $case', async ({ args, says }) => {
    const { run, llm } = await setup([{ text: 'never' }]);
    const result = await run(args);
    expect(result.stderr).toContain(says);
    expect(result.exitCode).toBe(2);
    expect(llm.requests).toHaveLength(0);
  });

  it('exits 3 when the turn reaches its step limit', async () => {
    const { run } = await setup([{ toolCalls: [{ name: 'read_file', arguments: { path: 'notes.txt' } }] }], {
      config: { agent: { maxSteps: 1 } },
    });
    const result = await run(['x', '--json']);
    expect(result.stderr).toContain('the turn stopped after 1 model steps');
    expect(JSON.parse(result.stdout.split('\n').at(-1) ?? '')).toMatchObject({ exitReason: 'step_limit', exitCode: 3 });
    expect(result.exitCode).toBe(3);
  });

  it('exits 3 when the loop guard stops a model that repeats the same call', async () => {
    const same: FakeTurn = { toolCalls: [{ name: 'read_file', arguments: { path: 'notes.txt' } }] };
    const { run } = await setup([same, same, same, same, { text: 'never' }]);
    const result = await run(['x', '--json']);
    expect(JSON.parse(result.stdout.split('\n').at(-1) ?? '')).toMatchObject({ exitReason: 'doom_loop', exitCode: 3 });
    expect(result.exitCode).toBe(3);
  });
});

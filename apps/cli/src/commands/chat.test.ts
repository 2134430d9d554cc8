import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { type AddressInfo, connect, createServer as createNetServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FIXTURE_MCP_SERVER, startFakeLlm } from '@molf/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type Cleanups,
  spawnInteractive,
  startLocalServer,
  stopSpawnedProcesses,
  waitUntil,
  writeFakeModelConfig,
} from '../testing/cli-test-kit.ts';

const cleanups: Cleanups = [];

afterEach(async () => {
  // The processes first: the cleanups remove directories they use.
  await stopSpawnedProcesses();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function tempDir(): Promise<string> {
  const path = await mkdtemp(join(tmpdir(), 'molf-chat-'));
  cleanups.push(() => rm(path, { recursive: true, force: true }));
  return path;
}

describe('molf chat', () => {
  it('streams answers, shows tool calls, takes approval answers and commands through stdin', async () => {
    const llm = await startFakeLlm({
      turns: [
        { text: ['Hi ', 'there.'] },
        { toolCalls: [{ name: 'shell_exec', arguments: { command: 'echo chat-ran' } }] },
        { text: 'It ran.' },
        { toolCalls: [{ name: 'shell_exec', arguments: { command: 'touch x' } }] },
        { text: 'Understood, not now.' },
      ],
    });
    cleanups.push(() => llm.close());
    const home = await tempDir();
    const project = await tempDir();
    await writeFakeModelConfig(home, llm.baseURL);
    const { child, seen, type, output } = spawnInteractive(['chat'], {
      cwd: project,
      env: { MOLF_HOME: home, MOLF_LOG_FILE: 'none' },
    });

    await seen('molf chat — session');
    type('/help');
    await seen('/sessions');
    type('hello');
    await seen('Hi there.');
    type('run something');
    await seen('session/always allow: "echo *"');
    expect(output()).toContain('? shell_exec asks for approval: echo chat-ran');
    type('s');
    await seen('✓ shell_exec: chat-ran');
    await seen('It ran.');
    type('make a file');
    await seen('? shell_exec asks for approval: touch x');
    type('d');
    await seen('reason (optional): ');
    type('not now');
    await seen('Understood, not now.');
    const toolMessage = llm.requests[4]?.messages.filter((message) => message.role === 'tool').at(-1);
    expect(String(toolMessage?.content)).toContain('not now');
    type('/new');
    // "new session " with the id after it: /help's "start a new session" must not count.
    await seen('new session ');
    // The picker lists the other sessions; the last answer is stored when it ends: list again until it counts.
    let listings = 0;
    await waitUntil(
      () => {
        if (output().includes('10 msgs')) return true;
        const shown = output().split('open which').length - 1;
        if (shown >= listings) {
          if (shown > 0) type('');
          listings = shown + 1;
          type('/sessions');
        }
        return false;
      },
      { what: 'the first session listed with its 10 messages' },
    );
    await seen('open which');
    type('1');
    // Resuming prints the history: the prompts, the answers, the calls with their outcome.
    await seen('› make a file');
    expect(output()).toContain('› hello');
    expect(output()).toContain('It ran.');
    type('/exit');
    const result = await child;
    expect(result.exitCode).toBe(0);
  });

  it('aborts the running turn on Ctrl-C and leaves on a second Ctrl-C when idle', async () => {
    const llm = await startFakeLlm({ turns: [{ text: ['thinking ', 'forever'], stallAfterChunks: 2 }] });
    cleanups.push(() => llm.close());
    const home = await tempDir();
    const project = await tempDir();
    await writeFakeModelConfig(home, llm.baseURL);
    const { child, seen, type } = spawnInteractive(['chat'], {
      cwd: project,
      env: { MOLF_HOME: home, MOLF_LOG_FILE: 'none' },
    });
    await seen('molf chat — session');
    type('think');
    await seen('thinking ');
    child.kill('SIGINT');
    await seen('(turn ended: aborted)');
    child.kill('SIGINT');
    await seen('(Ctrl-C again to exit)');
    child.kill('SIGINT');
    const result = await child;
    expect(result.exitCode).toBe(0);
  });

  it('keeps a pending approval across a dropped connection and answers it after the reconnect', async () => {
    const llm = await startFakeLlm({
      turns: [
        { toolCalls: [{ name: 'shell_exec', arguments: { command: 'echo after-reconnect' } }] },
        { text: 'Done after all.' },
      ],
    });
    cleanups.push(() => llm.close());
    const dataDir = await tempDir();
    const project = await tempDir();
    const { server, worker, tokens } = await startLocalServer(cleanups, {
      dataDir,
      workdir: project,
      llmBaseURL: llm.baseURL,
      tokenSuffix: 'chat-reconnect-token-01',
    });

    // A loopback proxy the test can cut, between chat and the server.
    const sockets = new Set<Socket>();
    let accepting = true;
    const proxy = createNetServer((inbound) => {
      if (!accepting) {
        inbound.destroy();
        return;
      }
      const outbound = connect(server.port, '127.0.0.1');
      for (const socket of [inbound, outbound]) {
        sockets.add(socket);
        socket.on('error', () => {});
        socket.on('close', () => sockets.delete(socket));
      }
      inbound.pipe(outbound).pipe(inbound);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise((resolve) => proxy.close(resolve)));
    const proxyUrl = `ws://127.0.0.1:${(proxy.address() as AddressInfo).port}`;

    const { child, seen, type, output } = spawnInteractive(
      ['chat', '--server', proxyUrl, '--token', tokens.client, '--worker', worker.workerId],
      { cwd: project, env: { MOLF_LOG_FILE: 'none', MOLF_CLIENT_DIR: dataDir } },
    );
    await seen('molf chat — session');
    type('run it');
    await seen('? shell_exec asks for approval: echo after-reconnect');

    accepting = false;
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => setTimeout(resolve, 300));
    accepting = true;
    // The answer goes out once the client has reconnected by itself.
    type('o');
    await seen('Done after all.');
    expect(output()).toContain('✓ shell_exec: after-reconnect');
    type('/exit');
    expect((await child).exitCode).toBe(0);
  });

  it('asks about a server new in .mcp.json while idle; "a" starts it and saves the rule for the worker', async () => {
    const llm = await startFakeLlm({ turns: [] });
    cleanups.push(() => llm.close());
    const home = await tempDir();
    const project = await tempDir();
    await writeFakeModelConfig(home, llm.baseURL);
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
    const { child, seen, type, output } = spawnInteractive(['chat'], {
      cwd: project,
      env: { MOLF_HOME: home, MOLF_LOG_FILE: 'none' },
    });
    await seen('? MCP server fixture asks to start: fixture: ');
    await seen('approve [y/a/n]: ');
    expect(output()).toContain(
      '[y] yes, start it for this worker process · [a] always start this exact definition · [n] no',
    );
    expect(existsSync(startedFile)).toBe(false);
    type('s');
    await seen('answer with [y]');
    type('a');
    await seen('→ approved');
    const deadline = Date.now() + 20_000;
    while (!existsSync(startedFile)) {
      if (Date.now() > deadline) throw new Error('the approved server did not start');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const [workerId] = await readdir(join(home, 'workers'));
    expect(await readFile(join(home, 'workers', workerId ?? '', 'permissions.jsonc'), 'utf8')).toContain(
      '"mcp.server"',
    );
    type('/exit');
    expect((await child).exitCode).toBe(0);
  });

  it("shows a subagent's work indented under its task call and answers the subagent's approval with o", async () => {
    const llm = await startFakeLlm({
      turns: [
        {
          toolCalls: [{ name: 'task', arguments: { agent: 'general', description: 'echo it', prompt: 'CHILD-CHAT' } }],
        },
        { match: 'CHILD-CHAT', toolCalls: [{ name: 'shell_exec', arguments: { command: 'echo child-chat' } }] },
        { match: 'CHILD-CHAT', text: 'The child ran it.' },
        { text: 'All done.' },
      ],
    });
    cleanups.push(() => llm.close());
    const home = await tempDir();
    const project = await tempDir();
    await writeFakeModelConfig(home, llm.baseURL);
    const { child, seen, type, output } = spawnInteractive(['chat'], {
      cwd: project,
      env: { MOLF_HOME: home, MOLF_LOG_FILE: 'none' },
    });
    await seen('molf chat — session');
    type('delegate it');
    // The default rules ask before the task tool starts a subagent.
    await seen('? task asks for approval: ');
    type('o');
    await seen('? [general] shell_exec asks for approval: echo child-chat');
    type('o');
    await seen('All done.');
    const lines = output().split('\n');
    // After the prompt ("> "), which stays on the line when stdin is not a terminal.
    const task = lines.findIndex((line) => line.endsWith('⚙ task general: echo it'));
    expect(task).toBeGreaterThanOrEqual(0);
    // Each line may follow a prompt ("approve [o/s/a/d]: ") that stays on the line when stdin is not a terminal.
    const after = lines.slice(task);
    const at = (text: string) => after.findIndex((line) => line.endsWith(text));
    expect(at('  │ ⚙ shell_exec echo child-chat')).toBeGreaterThan(0);
    expect(at('  │ ✓ shell_exec: child-chat')).toBeGreaterThan(0);
    expect(at('  │ The child ran it.')).toBeGreaterThan(0);
    expect(at('✓ task general: The child ran it.')).toBeGreaterThan(at('  │ The child ran it.'));
    const toolResult = llm.requests.at(-1)?.messages.find((message) => message.role === 'tool');
    expect(String(toolResult?.content)).toContain('The child ran it.');
    type('/exit');
    expect((await child).exitCode).toBe(0);
  });

  it('lists the skills and agents, loads a skill added while it runs with /<skill>, and keeps /help its own', async () => {
    const llm = await startFakeLlm({ turns: [{ text: 'Deploying now.' }] });
    cleanups.push(() => llm.close());
    const home = await tempDir();
    const project = await tempDir();
    await writeFakeModelConfig(home, llm.baseURL);
    const { child, seen, type, output } = spawnInteractive(['chat'], {
      cwd: project,
      env: { MOLF_HOME: home, MOLF_LOG_FILE: 'none' },
    });
    const count = (text: string) => output().split(text).length - 1;
    await seen('molf chat — session');
    type('/skills');
    await seen('no skills on this worker');
    type('/agents');
    await seen('  explore (built-in) — ');
    expect(output()).toContain('  general (built-in) — ');

    const writeSkill = async (name: string, description: string, body: string) => {
      await mkdir(join(project, '.agents', 'skills', name), { recursive: true });
      await writeFile(
        join(project, '.agents', 'skills', name, 'SKILL.md'),
        `---\ndescription: ${description}\n---\n${body}\n`,
      );
    };
    await writeSkill('help', 'A skill named like a command', 'Never loaded by /help.');
    await writeSkill('deploy', 'How to deploy this project to staging', 'Run make deploy ENV=staging.');
    // The worker reports the new skills once it has seen the files: until then /deploy is unknown.
    let typed = 0;
    await waitUntil(
      () => {
        if (llm.requests.length > 0) return true;
        if (count('unknown command /deploy') === typed) {
          typed++;
          type('/deploy  to staging, please');
        }
        return false;
      },
      { what: () => `/deploy to send a prompt:\n${output()}` },
    );
    await seen('Deploying now.');
    const sent = llm.requests[0]?.messages ?? [];
    expect(JSON.stringify(sent)).toContain('Run make deploy ENV=staging.');
    expect(sent).toContainEqual({ role: 'user', content: 'to staging, please' });
    expect(output()).toContain('⚙ skill {"name":"deploy"}');

    type('/help');
    await seen('/<skill> [text]');
    type('/skills');
    await seen('  deploy — How to deploy this project to staging');
    expect(output()).toContain('  help — A skill named like a command');
    type('/nosuch');
    await seen('unknown command /nosuch');
    expect(llm.requests).toHaveLength(1);
    type('/exit');
    expect((await child).exitCode).toBe(0);
  });

  it("resumed with --session while a subagent's approval waits, shows that approval and answers it", async () => {
    const llm = await startFakeLlm({
      turns: [
        { toolCalls: [{ name: 'task', arguments: { agent: 'general', description: 'wait', prompt: 'CHILD-WAIT' } }] },
        { match: 'CHILD-WAIT', toolCalls: [{ name: 'shell_exec', arguments: { command: 'echo waited' } }] },
        { match: 'CHILD-WAIT', text: 'The child is done.' },
        { text: 'Parent finished.' },
      ],
    });
    cleanups.push(() => llm.close());
    const dataDir = await tempDir();
    const project = await tempDir();
    const { server, worker, tokens } = await startLocalServer(cleanups, {
      dataDir,
      workdir: project,
      llmBaseURL: llm.baseURL,
      tokenSuffix: 'chat-child-approval-01',
    });
    await server.permissions.writeText(worker.workerId, JSON.stringify({ '*': 'ask', task: 'allow' }));
    const session = await server.sessions.create({ workerId: worker.workerId });
    await server.agent.prompt({ sessionId: session.sessionId, text: 'delegate' });
    await waitUntil(
      () => server.gate.pending().some((approval) => approval.subagent?.parentSessionId === session.sessionId),
      { what: "the child's approval" },
    );

    const { child, seen, type } = spawnInteractive(
      ['chat', '--server', server.url, '--token', tokens.client, '--session', session.sessionId],
      { cwd: project, env: { MOLF_LOG_FILE: 'none', MOLF_CLIENT_DIR: dataDir } },
    );
    await seen('? [general] shell_exec asks for approval: echo waited');
    type('o');
    await seen('  │ ✓ shell_exec: waited');
    await seen('Parent finished.');
    type('/exit');
    expect((await child).exitCode).toBe(0);
  });
});

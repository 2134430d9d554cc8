// biome-ignore-all lint/suspicious/noTemplateCurlyInString: .mcp.json's own ${VAR} syntax, kept as written
import { existsSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createSilentLogger } from '@molf/logging';
import { FIXTURE_MCP_SERVER, isProcessAlive, startFixtureMcpHttpServer } from '@molf/testkit';
import { describe, expect, it } from 'vitest';
import { createToolSandbox } from '../tools/tool-test-kit.ts';
import {
  MCP_RECONNECT,
  type McpManager,
  type McpServerState,
  type McpStartDecision,
  type McpStartRequest,
  startMcpManager,
} from './mcp-manager.ts';

const fixture = { type: 'stdio', command: process.execPath, args: [FIXTURE_MCP_SERVER] };

async function waitFor(predicate: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Writes `.mcp.json` with these servers into the workdir and starts a manager on it. */
async function startManager(
  workdir: string,
  servers: Record<string, unknown>,
  options: {
    reserved?: string[];
    onToolsChanged?: () => void;
    onServersChanged?: (servers: McpServerState[]) => void;
    waitReady?: boolean;
    approveStart?: (request: McpStartRequest) => Promise<McpStartDecision>;
  } = {},
): Promise<McpManager> {
  await writeFile(join(workdir, '.mcp.json'), JSON.stringify({ mcpServers: servers }));
  const manager = await startMcpManager({
    workdir,
    env: process.env,
    logger: createSilentLogger(),
    reserved: options.reserved ?? [],
    onToolsChanged: options.onToolsChanged ?? (() => {}),
    ...(options.onServersChanged === undefined ? {} : { onServersChanged: options.onServersChanged }),
    ...(options.approveStart === undefined ? {} : { approveStart: options.approveStart }),
  });
  if (options.waitReady !== false) await manager.ready;
  return manager;
}

async function call(manager: McpManager, name: string, args: Record<string, unknown> = {}) {
  const handler = manager.handlers().find((candidate) => candidate.definition.name === name);
  if (handler === undefined) throw new Error(`no tool ${name}`);
  const controller = new AbortController();
  return handler.run(args, { signal: controller.signal } as never);
}

describe('the MCP manager', () => {
  it('starts the servers of .mcp.json, leaves a failing one offline without failing, and names the tools', async () => {
    await using sandbox = await createToolSandbox();
    let changes = 0;
    const reports: string[][] = [];
    const manager = await startManager(
      sandbox.workdir,
      {
        fixture,
        broken: { type: 'stdio', command: '/nonexistent/mcp-server' },
        off: { ...fixture, enabled: false },
      },
      {
        reserved: ['read_file'],
        onToolsChanged: () => changes++,
        onServersChanged: (servers) => reports.push(servers.map((server) => `${server.name} ${server.status}`)),
      },
    );
    try {
      expect(manager.servers()).toMatchObject([
        { name: 'broken', status: 'offline', reason: expect.any(String), offered: [] },
        { name: 'fixture', status: 'connected', offered: expect.arrayContaining(['fixture_echo']) },
        { name: 'off', status: 'disabled', tools: [], offered: [] },
      ]);
      expect(manager.servers()[1]?.tools).toContain('echo');
      // Each change of state was reported, the last one as it is now.
      expect(reports.at(-1)).toEqual(['broken offline', 'fixture connected', 'off disabled']);
      expect(reports.flat()).toContain('fixture connecting');
      expect(manager.handlers().map((handler) => handler.definition.name)).toContain('fixture_echo');
      expect(changes).toBeGreaterThan(0);
      expect(await call(manager, 'fixture_echo', { text: 'x' })).toEqual({ output: 'x' });
    } finally {
      await manager.close();
    }
  });

  it('lists a server whose variable is not set as invalid, saying which, and starts the others with their defaults', async () => {
    await using sandbox = await createToolSandbox();
    const manager = await startManager(sandbox.workdir, {
      // The fixture's path as the default of a variable nobody sets.
      fixture: { ...fixture, args: [`\${MOLF_TEST_UNSET_FIXTURE:-${FIXTURE_MCP_SERVER}}`] },
      needy: { ...fixture, env: { KEY: '${MOLF_TEST_UNSET_KEY}' } },
    });
    try {
      expect(manager.servers()).toMatchObject([
        { name: 'fixture', status: 'connected', offered: expect.arrayContaining(['fixture_echo']) },
        {
          name: 'needy',
          status: 'invalid',
          reason: expect.stringContaining(
            'MCP server "needy" cannot start: the environment variable MOLF_TEST_UNSET_KEY (in env.KEY) is not set',
          ),
          offered: [],
        },
      ]);
    } finally {
      await manager.close();
    }
  });

  it('adds and removes tools announced by tools/list_changed, without a restart', async () => {
    await using sandbox = await createToolSandbox();
    const manager = await startManager(sandbox.workdir, { fixture });
    try {
      await call(manager, 'fixture_add_tool', { name: 'late' });
      await waitFor(
        () => manager.handlers().some((handler) => handler.definition.name === 'fixture_late'),
        'the new tool',
      );
      expect(await call(manager, 'fixture_late')).toEqual({ output: 'hello from late' });
      await call(manager, 'fixture_remove_tool', { name: 'late' });
      await waitFor(
        () => !manager.handlers().some((handler) => handler.definition.name === 'fixture_late'),
        'the removal',
      );
      // Arguments are checked against the server's schema before the call.
      const echo = manager.handlers().find((handler) => handler.definition.name === 'fixture_echo');
      expect(echo?.definition.args.safeParse({ text: 1 }).success).toBe(false);
      expect(echo?.definition.args.safeParse({ text: 'ok' }).success).toBe(true);
    } finally {
      await manager.close();
    }
  });

  it('answers "offline — reconnecting" after a crash, reconnects by itself, and the tools come back', async () => {
    await using sandbox = await createToolSandbox();
    const manager = await startManager(sandbox.workdir, { fixture });
    try {
      const echo = manager.handlers().find((handler) => handler.definition.name === 'fixture_echo');
      await call(manager, 'fixture_crash');
      await waitFor(() => manager.servers()[0]?.status !== 'connected', 'the crash to be noticed');
      const offline = await echo?.run({ text: 'x' }, { signal: new AbortController().signal } as never);
      expect(offline).toMatchObject({ error: '[fixture] is offline — reconnecting' });
      await waitFor(
        () => manager.servers()[0]?.status === 'connected',
        `the reconnect (first after ${MCP_RECONNECT.initialMs} ms)`,
      );
      expect(await call(manager, 'fixture_echo', { text: 'back' })).toEqual({ output: 'back' });
    } finally {
      await manager.close();
    }
  });

  it('stops its server processes when closed: no orphan is left', async () => {
    await using sandbox = await createToolSandbox();
    const manager = await startManager(sandbox.workdir, { fixture });
    const pid = Number((await call(manager, 'fixture_pid')).output);
    expect(isProcessAlive(pid)).toBe(true);
    await manager.close();
    await waitFor(() => !isProcessAlive(pid), 'the MCP server process to end');
  });

  it('applies edits of .mcp.json without a restart, and keeps the running servers when the file breaks', async () => {
    await using sandbox = await createToolSandbox();
    const file = join(sandbox.workdir, '.mcp.json');
    const manager = await startManager(sandbox.workdir, { one: fixture });
    const names = () => manager.handlers().map((handler) => handler.definition.name);
    try {
      const firstPid = Number((await call(manager, 'one_pid')).output);
      await writeFile(file, JSON.stringify({ mcpServers: { one: fixture, two: fixture } }));
      await waitFor(() => names().includes('two_echo'), 'the added server');
      expect(Number((await call(manager, 'one_pid')).output)).toBe(firstPid);

      await writeFile(
        file,
        JSON.stringify({ mcpServers: { one: { ...fixture, env: { CHANGED: '1' } }, two: fixture } }),
      );
      await waitFor(
        () =>
          manager.servers().find((server) => server.name === 'one')?.status !== 'connected' ||
          !isProcessAlive(firstPid),
        'the restart',
      );
      await waitFor(
        () => manager.servers().find((server) => server.name === 'one')?.status === 'connected',
        'one back',
      );
      expect((await call(manager, 'one_env', { name: 'CHANGED' })).output).toBe('1');
      await waitFor(() => !isProcessAlive(firstPid), 'the old process to end');

      await writeFile(file, '{ "mcpServers": { "one": ');
      await new Promise((resolve) => setTimeout(resolve, 700));
      expect(manager.servers().map((server) => [server.name, server.status])).toEqual([
        ['one', 'connected'],
        ['two', 'connected'],
      ]);

      await writeFile(file, JSON.stringify({ mcpServers: { one: { ...fixture, env: { CHANGED: '1' } } } }));
      await waitFor(() => !names().includes('two_echo'), 'the removed server');
      expect(names()).toContain('one_echo');
    } finally {
      await manager.close();
    }
  });

  it('stops a server that is still connecting when closed: no orphan is left', async () => {
    await using sandbox = await createToolSandbox();
    const pidFile = join(sandbox.workdir, 'hung.pid');
    // A server that starts and never answers the handshake.
    const hung = {
      type: 'stdio',
      command: process.execPath,
      args: [
        '-e',
        `require('node:fs').writeFileSync(${JSON.stringify(pidFile)}, String(process.pid)); setInterval(() => {}, 1000)`,
      ],
    };
    const manager = await startManager(sandbox.workdir, { hung }, { waitReady: false });
    let pid = Number.NaN;
    await waitFor(() => {
      try {
        pid = Number(readFileSync(pidFile, 'utf8'));
      } catch {
        return false;
      }
      return Number.isInteger(pid) && pid > 0;
    }, 'the hung server to start');
    expect(manager.servers()).toMatchObject([{ name: 'hung', status: 'connecting' }]);
    await manager.close();
    await waitFor(() => !isProcessAlive(pid), 'the hung server to be stopped');
  });

  it('marks an HTTP server that went away offline, and reconnects when it is back', async () => {
    await using sandbox = await createToolSandbox();
    const first = await startFixtureMcpHttpServer();
    const port = Number(new URL(first.url).port);
    const manager = await startManager(sandbox.workdir, { remote: { type: 'http', url: first.url } });
    try {
      expect(await call(manager, 'remote_echo', { text: 'one' })).toEqual({ output: 'one' });
      await first.close();
      expect(await call(manager, 'remote_echo', { text: 'two' })).toMatchObject({
        error: '[remote] is offline — reconnecting',
      });
      expect(manager.servers()[0]?.status).not.toBe('connected');
      await using second = await startFixtureMcpHttpServer({ port });
      await waitFor(() => manager.servers()[0]?.status === 'connected', 'the reconnect');
      expect(await call(manager, 'remote_echo', { text: 'three' })).toEqual({ output: 'three' });
      expect(second.requests).toBeGreaterThan(0);
    } finally {
      await manager.close();
    }
  });
});

/** An approver the test answers by hand: each question waits in `asked` until it is decided. */
function createManualApprover() {
  const asked: Array<McpStartRequest & { decide(decision: McpStartDecision): void }> = [];
  return {
    asked,
    approveStart: (request: McpStartRequest) =>
      new Promise<McpStartDecision>((resolve) => {
        asked.push({ ...request, decide: resolve });
      }),
  };
}

describe('the MCP manager with an approver', () => {
  it('starts a new server only once it is allowed, its tools absent meanwhile, and does not wait for it to be ready', async () => {
    await using sandbox = await createToolSandbox();
    const startedFile = join(sandbox.workdir, 'starts.log');
    const approver = createManualApprover();
    const manager = await startManager(
      sandbox.workdir,
      { fixture: { ...fixture, env: { FIXTURE_MCP_STARTED_FILE: startedFile, KEY: '${KEY:-unset}' } } },
      { approveStart: approver.approveStart },
    );
    try {
      expect(manager.servers()).toEqual([
        { name: 'fixture', type: 'stdio', status: 'awaiting approval', tools: [], offered: [] },
      ]);
      await waitFor(() => approver.asked.length === 1, 'the question');
      const [question] = approver.asked;
      // The definition as written: KEY is not interpolated (its value could be a secret), nor its default.
      expect(question?.definition).toEqual({
        type: 'stdio',
        command: process.execPath,
        args: [FIXTURE_MCP_SERVER],
        env: { FIXTURE_MCP_STARTED_FILE: startedFile, KEY: '${KEY:-unset}' },
      });
      expect(question?.subject).toMatch(/^fixture: .* #[0-9a-f]{12}$/);
      expect(manager.handlers()).toEqual([]);
      expect(existsSync(startedFile)).toBe(false);

      question?.decide({ type: 'allow' });
      await waitFor(() => manager.servers()[0]?.status === 'connected', 'the start after approval');
      expect(await call(manager, 'fixture_echo', { text: 'ok' })).toEqual({ output: 'ok' });

      await call(manager, 'fixture_crash');
      await waitFor(() => manager.servers()[0]?.status !== 'connected', 'the crash to be noticed');
      await waitFor(() => manager.servers()[0]?.status === 'connected', 'the reconnect');
      expect(readFileSync(startedFile, 'utf8').trim().split('\n')).toHaveLength(2);
      expect(approver.asked).toHaveLength(1);
    } finally {
      await manager.close();
    }
  });

  it('keeps a denied server stopped until its definition changes, and withdraws the question of a server removed while it waits', async () => {
    await using sandbox = await createToolSandbox();
    const file = join(sandbox.workdir, '.mcp.json');
    const approver = createManualApprover();
    const manager = await startManager(sandbox.workdir, { one: fixture }, { approveStart: approver.approveStart });
    try {
      await waitFor(() => approver.asked.length === 1, 'the question');
      approver.asked[0]?.decide({ type: 'deny', reason: 'not this one' });
      await waitFor(() => manager.servers()[0]?.status === 'denied', 'the denied status');
      expect(manager.servers()).toEqual([
        { name: 'one', type: 'stdio', status: 'denied', reason: 'not this one', tools: [], offered: [] },
      ]);

      await writeFile(file, JSON.stringify({ mcpServers: { one: fixture, two: fixture } }));
      await waitFor(() => approver.asked.length === 2, 'the question about the added server');
      expect(approver.asked[1]?.name).toBe('two');
      expect(manager.servers()[0]?.status).toBe('denied');

      await writeFile(file, JSON.stringify({ mcpServers: { one: { ...fixture, args: [FIXTURE_MCP_SERVER, '--x'] } } }));
      await waitFor(() => approver.asked.length === 3, 'the question about the changed server');
      expect(approver.asked[2]?.name).toBe('one');
      expect(approver.asked[2]?.subject).not.toBe(approver.asked[0]?.subject);
      await waitFor(() => approver.asked[1]?.signal.aborted === true, 'the removed server to withdraw its question');
      expect(manager.servers().map((server) => server.name)).toEqual(['one']);
    } finally {
      await manager.close();
    }
    expect(approver.asked[2]?.signal.aborted).toBe(true);
  });
});

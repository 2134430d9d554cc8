import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createSilentLogger } from '@molf/logging';
import { FIXTURE_MCP_SERVER, startFixtureMcpHttpServer } from '@molf/testkit';
import { describe, expect, it } from 'vitest';
import { createToolSandbox } from '../tools/tool-test-kit.ts';
import { MCP_RECONNECT, type McpManager, startMcpManager } from './mcp-manager.ts';

const fixture = { type: 'stdio', command: process.execPath, args: [FIXTURE_MCP_SERVER] };

async function waitFor(predicate: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Writes `.mcp.json` with these servers into the workdir and starts a manager on it. */
async function startManager(
  workdir: string,
  servers: Record<string, unknown>,
  options: { reserved?: string[]; onToolsChanged?: () => void; waitReady?: boolean } = {},
): Promise<McpManager> {
  await writeFile(join(workdir, '.mcp.json'), JSON.stringify({ mcpServers: servers }));
  const manager = await startMcpManager({
    workdir,
    env: process.env,
    logger: createSilentLogger(),
    reserved: options.reserved ?? [],
    onToolsChanged: options.onToolsChanged ?? (() => {}),
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
    const manager = await startManager(
      sandbox.workdir,
      { fixture, broken: { type: 'stdio', command: '/nonexistent/mcp-server' } },
      { reserved: ['read_file'], onToolsChanged: () => changes++ },
    );
    try {
      expect(manager.servers()).toMatchObject([
        { name: 'broken', status: 'offline', reason: expect.any(String) },
        { name: 'fixture', status: 'connected' },
      ]);
      expect(manager.handlers().map((handler) => handler.definition.name)).toContain('fixture_echo');
      expect(changes).toBeGreaterThan(0);
      expect(await call(manager, 'fixture_echo', { text: 'x' })).toEqual({ output: 'x' });
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
    expect(isAlive(pid)).toBe(true);
    await manager.close();
    await waitFor(() => !isAlive(pid), 'the MCP server process to end');
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
        () => manager.servers().find((server) => server.name === 'one')?.status !== 'connected' || !isAlive(firstPid),
        'the restart',
      );
      await waitFor(
        () => manager.servers().find((server) => server.name === 'one')?.status === 'connected',
        'one back',
      );
      expect((await call(manager, 'one_env', { name: 'CHANGED' })).output).toBe('1');
      await waitFor(() => !isAlive(firstPid), 'the old process to end');

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
    await waitFor(() => !isAlive(pid), 'the hung server to be stopped');
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

import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FIXTURE_MCP_SERVER } from '@molf/testkit';
import { execaNode } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { startLocalServer } from '../testing/cli-test-kit.ts';

const CLI = fileURLToPath(new URL('../../bin/molf.js', import.meta.url));
const cleanups: Array<() => Promise<unknown>> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function project(): Promise<string> {
  const path = await mkdtemp(join(tmpdir(), 'molf-mcp-cli-'));
  cleanups.push(() => rm(path, { recursive: true, force: true }));
  await writeFile(
    join(path, '.mcp.json'),
    JSON.stringify({
      mcpServers: {
        fixture: { type: 'stdio', command: process.execPath, args: [FIXTURE_MCP_SERVER] },
        gone: { command: '/nonexistent/server' },
      },
    }),
  );
  return path;
}

const molf = (args: string[], cwd: string) =>
  execaNode(CLI, args, { cwd, env: { MOLF_LOG_FILE: 'none' }, reject: false, stdin: 'ignore', timeout: 60_000 });

describe('molf mcp', () => {
  it('lists each server with its state and tools', async () => {
    const cwd = await project();
    const result = await molf(['mcp', 'list'], cwd);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain('fixture (stdio): connected');
    expect(result.stdout).toContain('  fixture_echo  Echo the text back');
    expect(result.stdout).toMatch(/gone \(stdio\): offline — .*ENOENT/);
    const json = JSON.parse((await molf(['mcp', 'list', '--json'], cwd)).stdout) as {
      servers: Array<{ name: string; status: string }>;
    };
    expect(json.servers.map((server) => [server.name, server.status])).toEqual([
      ['fixture', 'connected'],
      ['gone', 'offline'],
    ]);
  });

  it('calls one tool by hand, exiting 1 when the tool fails or does not exist', async () => {
    const cwd = await project();
    const echo = await molf(['mcp', 'call', 'fixture', 'echo', '{"text": "by hand"}'], cwd);
    expect(echo.stdout).toBe('by hand');
    expect(echo.exitCode).toBe(0);
    const fail = await molf(['mcp', 'call', 'fixture', 'fail'], cwd);
    expect(fail.exitCode).toBe(1);
    expect(fail.stderr).toContain('[fixture] the fixture failed on purpose');
    const missing = await molf(['mcp', 'call', 'fixture', 'nope'], cwd);
    expect(missing.exitCode).toBe(1);
    expect(missing.stderr).toContain('fixture has no tool "nope"');
  });
});

async function waitUntil(predicate: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A project whose .mcp.json has the fixture server, and a server and worker on it, in this process. */
async function trustSetup(tokenSuffix: string) {
  const cwd = await mkdtemp(join(tmpdir(), 'molf-mcp-trust-'));
  cleanups.push(() => rm(cwd, { recursive: true, force: true }));
  const dataDir = await mkdtemp(join(tmpdir(), 'molf-mcp-trust-data-'));
  cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
  const startedFile = join(cwd, 'fixture-starts.log');
  await writeFile(
    join(cwd, '.mcp.json'),
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
  const stack = await startLocalServer(cleanups, {
    dataDir,
    workdir: cwd,
    llmBaseURL: 'http://127.0.0.1:9/v1',
    tokenSuffix,
  });
  const status = () => stack.worker.mcpServers().find((server) => server.name === 'fixture')?.status;
  await waitUntil(() => status() === 'awaiting approval', 'the server to wait for approval');
  const flags = ['--server', stack.server.url, '--token', stack.tokens.client];
  return { ...stack, cwd, startedFile, status, flags };
}

describe('molf mcp trust', () => {
  it('shows each server of .mcp.json with what is approved, saves allow rules with --yes, and the waiting server starts', async () => {
    const { cwd, server, worker, startedFile, status, flags } = await trustSetup('mcp-trust-token-0001');
    const result = await molf(['mcp', 'trust', '--yes', ...flags], cwd);
    expect(result.stderr).toBe('');
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toMatch(/fixture: (\S+=… )*\S+ \S+ #[0-9a-f]{12}/);
    expect(result.stdout).toContain('trusted 1 server');
    await waitUntil(() => status() === 'connected', 'the trusted server to start');
    expect(existsSync(startedFile)).toBe(true);
    expect((await server.permissions.readText(worker.workerId)).text).toContain('"mcp.server"');

    const again = await molf(['mcp', 'trust', '--yes', ...flags], cwd);
    expect(again.exitCode).toBe(0);
    expect(again.stdout).toContain('already allowed');
  });

  it('refuses without --yes when stdin is not a terminal, and saves nothing', async () => {
    const { cwd, server, worker, startedFile, status, flags } = await trustSetup('mcp-trust-token-0002');
    const before = (await server.permissions.readText(worker.workerId)).text;
    const result = await molf(['mcp', 'trust', ...flags], cwd);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain('--yes');
    expect((await server.permissions.readText(worker.workerId)).text).toBe(before);
    expect(status()).toBe('awaiting approval');
    expect(existsSync(startedFile)).toBe(false);
  });
});

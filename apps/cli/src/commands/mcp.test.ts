import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FIXTURE_MCP_SERVER } from '@molf/testkit';
import { execaNode } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';

const CLI = fileURLToPath(new URL('../main.ts', import.meta.url));
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

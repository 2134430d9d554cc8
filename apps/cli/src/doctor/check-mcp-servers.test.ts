// biome-ignore-all lint/suspicious/noTemplateCurlyInString: .mcp.json's own ${VAR} syntax, kept as written
import { chmod, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checkMcpServers } from './check-mcp-servers.ts';

const directories: string[] = [];
afterEach(async () => {
  for (const directory of directories.splice(0)) await rm(directory, { recursive: true, force: true });
});

/** A project directory with this `.mcp.json` (none for undefined). */
async function project(config?: unknown): Promise<string> {
  const workdir = await realpath(await mkdtemp(join(tmpdir(), 'molf-doctor-mcp-')));
  directories.push(workdir);
  if (config !== undefined) {
    await writeFile(join(workdir, '.mcp.json'), typeof config === 'string' ? config : JSON.stringify(config));
  }
  return workdir;
}

/** PATH holding only the directory of the Node.js running the tests. */
const env = { PATH: dirname(process.execPath) };

describe('the MCP server checks', () => {
  it('skip a project without .mcp.json', async () => {
    const workdir = await project();
    expect(await checkMcpServers({ workdir, env })).toEqual([
      { id: 'mcp', status: 'skipped', summary: `no .mcp.json in ${workdir}: no MCP servers` },
    ]);
  });

  it('fail for a file that does not parse, with its line and column', async () => {
    const workdir = await project('{\n  "mcpServers": {\n    "a": { "command": "node" ,, }\n  }\n}\n');
    const [check] = await checkMcpServers({ workdir, env });
    expect(check).toMatchObject({ id: 'mcp', status: 'error', fix: expect.stringContaining('molf mcp list') });
    expect(check?.summary).toMatch(/\.mcp\.json: line 3, column \d+: invalid JSON/);
  });

  it('find a stdio command on PATH or by its path from the workdir, and fail for one that is missing', async () => {
    const workdir = await project({
      mcpServers: {
        onPath: { command: 'node', args: ['server.js'] },
        local: { command: './bin/server' },
        missing: { command: 'no-such-mcp-server-9f2' },
        notExecutable: { command: './server.sh' },
        off: { command: 'no-such-either', enabled: false },
      },
    });
    await writeFile(join(workdir, 'server.sh'), '#!/bin/sh\n');
    await chmod(join(workdir, 'server.sh'), 0o644);
    const checks = await checkMcpServers({ workdir, env });
    expect(checks).toEqual([
      {
        id: 'mcp:onPath',
        status: 'ok',
        summary: `MCP server onPath: node (${join(dirname(process.execPath), 'node')})`,
      },
      {
        id: 'mcp:local',
        status: 'error',
        summary: `MCP server local: command ./bin/server does not exist (${join(workdir, 'bin/server')})`,
        fix: `install ./bin/server, or correct mcpServers.local.command in ${join(workdir, '.mcp.json')}`,
      },
      {
        id: 'mcp:missing',
        status: 'error',
        summary: 'MCP server missing: command no-such-mcp-server-9f2 is not on PATH',
        fix: `install no-such-mcp-server-9f2, or correct mcpServers.missing.command in ${join(workdir, '.mcp.json')}`,
      },
      {
        id: 'mcp:notExecutable',
        status: 'error',
        summary: `MCP server notExecutable: ${join(workdir, 'server.sh')} is not an executable file`,
        fix: `chmod +x ${join(workdir, 'server.sh')}, or correct mcpServers.notExecutable.command in ${join(workdir, '.mcp.json')}`,
      },
      { id: 'mcp:off', status: 'skipped', summary: 'MCP server off: disabled in .mcp.json' },
    ]);
  });

  it('shows a URL server by its origin only, and fails for a server whose variable is not set', async () => {
    const workdir = await project({
      mcpServers: {
        docs: { url: 'https://mcp.example.com/v1?key=${DOCS_KEY}' },
        github: { command: 'node', env: { TOKEN: '${GITHUB_TOKEN}' } },
      },
    });
    const checks = await checkMcpServers({ workdir, env: { ...env, DOCS_KEY: 'secret-in-url-51' } });
    expect(JSON.stringify(checks)).not.toContain('secret-in-url-51');
    expect(checks).toContainEqual({
      id: 'mcp:docs',
      status: 'ok',
      summary: 'MCP server docs: https://mcp.example.com (http)',
    });
    expect(checks).toContainEqual(
      expect.objectContaining({
        id: 'mcp:github',
        status: 'error',
        summary: expect.stringContaining('GITHUB_TOKEN'),
        fix: expect.stringContaining('${VAR:-default}'),
      }),
    );
  });

  it('fail for a URL server whose URL is not an absolute http(s) URL', async () => {
    const workdir = await project({ mcpServers: { docs: { url: 'mcp.example.com/v1' } } });
    expect(await checkMcpServers({ workdir, env })).toEqual([
      expect.objectContaining({
        id: 'mcp',
        status: 'error',
        summary: expect.stringContaining('not an absolute http(s) URL'),
      }),
    ]);
  });
});

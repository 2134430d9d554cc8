import { chmod, mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { createServer } from '@molf/server';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { saveConnection } from '../connection-store.ts';
import { findExecutable } from '../doctor/find-executable.ts';
import {
  type Cleanups,
  sandboxUnavailable,
  spawnMolf,
  startLocalServer,
  stopSpawnedProcesses,
} from '../testing/cli-test-kit.ts';

const cleanups: Cleanups = [];
afterEach(async () => {
  await stopSpawnedProcesses();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function tempDir(): Promise<string> {
  const directory = await realpath(await mkdtemp(join(tmpdir(), 'molf-doctor-')));
  cleanups.push(() => rm(directory, { recursive: true, force: true }));
  return directory;
}

const OPENAI_KEY = 'sk-doctor-never-shown-3e9a';
const ANTHROPIC_KEY = 'sk-ant-doctor-never-shown-77b1';

/**
 * A PATH holding only ripgrep and bubblewrap, where this machine has them working: the healthy
 * set-up must not depend on what else is installed, nor fail where the sandbox cannot run.
 */
let toolsPath: string;
beforeAll(async () => {
  toolsPath = await realpath(await mkdtemp(join(tmpdir(), 'molf-doctor-bin-')));
  const rg = await findExecutable('rg', { env: process.env, cwd: process.cwd() });
  if (rg.found) await symlink(rg.path, join(toolsPath, 'rg'));
  const bwrap = await findExecutable('bwrap', { env: process.env, cwd: process.cwd() });
  if (bwrap.found && (await sandboxUnavailable()) === undefined) await symlink(bwrap.path, join(toolsPath, 'bwrap'));
  return () => rm(toolsPath, { recursive: true, force: true });
});

/** The environment of a doctor run that sees only temp directories (and no key of the test machine). */
function doctorEnv(options: { dataDir: string; clientDir: string; home: string }): Record<string, string> {
  return {
    PATH: toolsPath,
    HOME: options.home,
    MOLF_HOME: options.dataDir,
    MOLF_CLIENT_DIR: options.clientDir,
    MOLF_LOG_FILE: 'none',
  };
}

describe('molf doctor', () => {
  it("on a healthy set-up shows every check passed and exits 0, printing no key (the project's model over the user's)", async () => {
    const dataDir = await tempDir();
    const clientDir = await tempDir();
    const projectDir = await tempDir();
    const { server } = await startLocalServer(cleanups, {
      dataDir,
      workdir: projectDir,
      llmBaseURL: 'http://127.0.0.1:9/v1',
      tokenSuffix: 'doctor_healthy_0001',
    });
    await saveConnection({
      projectDir,
      url: server.url,
      token: 'molf_c_doctor_healthy_0001',
      env: { MOLF_CLIENT_DIR: clientDir },
    });
    await writeFile(
      join(dataDir, 'config.jsonc'),
      JSON.stringify({ model: 'anthropic/claude-sonnet-4-5', keys: { anthropic: ANTHROPIC_KEY } }),
      { mode: 0o600 },
    );
    // The project's model comes before the user's, as molf up, run and chat here would take it.
    await mkdir(join(projectDir, '.molf'), { recursive: true });
    await writeFile(join(projectDir, '.molf', 'config.jsonc'), '{ "model": "openai/gpt-4.1" }');
    await writeFile(
      join(projectDir, '.mcp.json'),
      JSON.stringify({
        mcpServers: {
          tools: { command: process.execPath, args: ['server.js'] },
          docs: { url: 'https://mcp.example.com/mcp' },
        },
      }),
    );
    const result = await spawnMolf(['doctor'], {
      cwd: projectDir,
      extendEnv: false,
      env: { ...doctorEnv({ dataDir, clientDir, home: await tempDir() }), OPENAI_API_KEY: OPENAI_KEY },
    });
    const output = result.stdout;
    expect(result.exitCode, output).toBe(0);
    expect(output).toMatch(/^molf 0\.1\.0 \(.+\)\n/);
    expect(output).toContain(`✓ Node.js ${process.versions.node}\n`);
    expect(output).toContain(
      `✓ server ${server.url} (saved by molf up for ${projectDir} in ${join(clientDir, 'connections.json')}) answers (server 0.1.0, 1 of 1 workers online)\n`,
    );
    expect(output).toContain(`✓ data directory ${dataDir}: private (0700, yours)\n`);
    expect(output).toContain(`✓ client directory ${clientDir}: private (0700, yours)\n`);
    expect(output).toContain(`✓ config file (API keys) ${join(dataDir, 'config.jsonc')}: private (0600)\n`);
    expect(output).toContain('✓ provider openai (default model openai/gpt-4.1): key set (OPENAI_API_KEY)\n');
    expect(output).toContain('✓ provider anthropic: key set ("keys.anthropic" in the config file)\n');
    expect(output).toContain(`✓ MCP server tools: ${process.execPath} (${process.execPath})\n`);
    expect(output).toContain('✓ MCP server docs: https://mcp.example.com (http)\n');
    expect(output).not.toContain('✗');
    expect(output).toMatch(/\n\n(healthy|healthy, with \d warnings?)$/);
    expect(output).not.toContain(OPENAI_KEY);
    expect(output).not.toContain(ANTHROPIC_KEY);
    // Not a terminal: no colour.
    expect(output).not.toContain('\u001b[');
  });

  it('on a broken set-up shows each problem with its fix and exits 1', async () => {
    const dataDir = await tempDir();
    const clientDir = await tempDir();
    const projectDir = await tempDir();
    // A server `molf up` saved, since stopped.
    const server = await createServer({
      port: 0,
      dataDir,
      tokens: { client: 'molf_c_doctor_broken_0001', worker: 'molf_w_doctor_broken_0001' },
    });
    await saveConnection({
      projectDir,
      url: server.url,
      token: 'molf_c_doctor_broken_0001',
      env: { MOLF_CLIENT_DIR: clientDir },
    });
    await server.close();
    await chmod(dataDir, 0o755);
    await writeFile(join(dataDir, 'config.jsonc'), '{ "model": "anthropic/claude-sonnet-4-5" }');
    await writeFile(
      join(projectDir, '.mcp.json'),
      JSON.stringify({ mcpServers: { search: { command: 'no-such-mcp-server-c41' } } }),
    );
    const result = await spawnMolf(['doctor'], {
      cwd: projectDir,
      extendEnv: false,
      env: { ...doctorEnv({ dataDir, clientDir, home: await tempDir() }), FORCE_COLOR: '1' },
    });
    expect(result.exitCode, result.stdout).toBe(1);
    // FORCE_COLOR: coloured on a pipe too; the lines read the same without the colours.
    expect(result.stdout).toContain('\u001b[');
    const output = stripVTControlCharacters(result.stdout);
    const problems = [
      [
        `✗ server ${server.url} (saved by molf up for ${projectDir} in ${join(clientDir, 'connections.json')}) does not answer: connection refused`,
        `  fix: start it again: run \`molf up\` in ${projectDir}`,
      ],
      [`✗ data directory ${dataDir} is mode 0755: other users can read it`, `  fix: chmod 700 ${dataDir}`],
      [
        '✗ provider anthropic (default model anthropic/claude-sonnet-4-5): no API key',
        `  fix: export ANTHROPIC_API_KEY=… where the server runs, or set "keys": { "anthropic": "…" } in ${join(dataDir, 'config.jsonc')}`,
      ],
      [
        '✗ MCP server search: command no-such-mcp-server-c41 is not on PATH',
        `  fix: install no-such-mcp-server-c41, or correct mcpServers.search.command in ${join(projectDir, '.mcp.json')}`,
      ],
    ];
    for (const [problem, fix] of problems) expect(output).toContain(`${problem}\n${fix}\n`);
    expect(output).toMatch(/\n\n4 problems(, \d warnings?)?: see the fixes above$/);
  });

  it('--json gives every check with its status and fix; a .mcp.json that does not parse is a problem', async () => {
    const dataDir = await tempDir();
    const clientDir = await tempDir();
    const projectDir = await tempDir();
    await mkdir(join(projectDir, 'sub'));
    await writeFile(join(projectDir, '.mcp.json'), '{ "mcpServers": { "a": { "command": "node" } }');
    const result = await spawnMolf(['doctor', '--json', '--workdir', projectDir], {
      cwd: join(projectDir, 'sub'),
      extendEnv: false,
      env: { ...doctorEnv({ dataDir, clientDir, home: await tempDir() }), FORCE_COLOR: '1' },
    });
    expect(result.exitCode).toBe(1);
    const report = JSON.parse(result.stdout) as {
      version: string;
      healthy: boolean;
      checks: Array<{ id: string; status: string; summary: string; fix?: string }>;
    };
    expect(report.version).toMatch(/^molf 0\.1\.0 \(/);
    expect(report.healthy).toBe(false);
    expect(report.checks.map((check) => check.id)).toEqual(
      expect.arrayContaining(['node', 'ripgrep', 'bubblewrap', 'connection', 'data-dir', 'model', 'mcp']),
    );
    expect(report.checks.find((check) => check.id === 'mcp')).toEqual({
      id: 'mcp',
      status: 'error',
      summary: expect.stringMatching(
        /\.mcp\.json: line 1, column \d+: invalid JSON .*; a worker here starts no MCP server$/,
      ),
      fix: `correct ${join(projectDir, '.mcp.json')} there (\`molf mcp list\` shows what a worker would start)`,
    });
    expect(report.checks.find((check) => check.id === 'connection')?.status).toBe('skipped');
    expect(result.stdout).not.toContain('\u001b[');
  });
});

import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createSilentLogger } from '@molf/logging';
import { describe, expect, it } from 'vitest';
import { connectMcpServer } from '../mcp/mcp-connection.ts';
import type { SandboxRunner } from './create-sandbox-runner.ts';
import { prepareSandbox } from './prepare-sandbox.ts';
import { bwrapUnavailable, outsideTmpDir, tempDir } from './sandbox-test-kit.ts';

const unavailable = await bwrapUnavailable();
if (unavailable !== undefined) process.stderr.write(`SKIPPED sandboxed MCP server tests: ${unavailable}\n`);

const PROBE_SERVER = fileURLToPath(new URL('./probe-mcp-server.ts', import.meta.url));

async function connectProbe(workdir: string, sandbox: SandboxRunner | undefined) {
  return connectMcpServer({
    config: { name: 'probe', type: 'stdio', command: process.execPath, args: [PROBE_SERVER], env: {} },
    workdir,
    env: process.env,
    logger: createSilentLogger(),
    onToolsChanged: () => {},
    onClose: () => {},
    sandbox,
  });
}

describe.skipIf(unavailable !== undefined)('a stdio MCP server in the sandbox (real bwrap)', () => {
  it("runs in a PID namespace of its own, cannot read the worker's environment nor a hidden directory", async () => {
    await using workdir = await tempDir('molf-mcp-sandbox-');
    await using home = await outsideTmpDir('molf-mcp-home-');
    await mkdir(join(home.path, '.molf'));
    await writeFile(join(home.path, '.molf', 'connections.json'), 'molf_c_must-stay-hidden');
    await writeFile(join(workdir.path, 'notes.txt'), 'in the workdir');
    const signal = new AbortController().signal;
    const read = async (connection: Awaited<ReturnType<typeof connectProbe>>, path: string) =>
      (await connection.call({ tool: 'read_text', args: { path }, signal })).output;

    const outside = await connectProbe(workdir.path, undefined);
    try {
      // Without the sandbox the server can read what the worker's user can.
      expect(await read(outside, join(home.path, '.molf', 'connections.json'))).toBe('molf_c_must-stay-hidden');
      expect(await read(outside, `/proc/${process.pid}/environ`)).not.toContain('cannot read');
    } finally {
      await outside.close();
    }

    const prepared = await prepareSandbox({
      config: { mode: 'required' },
      workdir: workdir.path,
      env: process.env,
      home: home.path,
    });
    expect(prepared.mcpRunner).toBeDefined();
    const inside = await connectProbe(workdir.path, prepared.mcpRunner);
    try {
      expect(Number((await inside.call({ tool: 'pid', args: {}, signal })).output)).toBeLessThan(10);
      expect(await read(inside, join(home.path, '.molf', 'connections.json'))).toContain('cannot read');
      expect(await read(inside, `/proc/${process.pid}/environ`)).toContain('cannot read');
      expect(await read(inside, join(workdir.path, 'notes.txt'))).toBe('in the workdir');
    } finally {
      await inside.close();
    }
  });

  it('is not sandboxed when the MCP flag is off', async () => {
    await using workdir = await tempDir('molf-mcp-sandbox-');
    const prepared = await prepareSandbox({
      config: { mode: 'required', mcp: false },
      workdir: workdir.path,
      env: process.env,
    });
    expect(prepared.runner).toBeDefined();
    expect(prepared.mcpRunner).toBeUndefined();
    expect(prepared.status).toMatchObject({ active: true, mcp: false });
  });
});

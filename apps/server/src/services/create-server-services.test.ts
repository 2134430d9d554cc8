import { randomUUID } from 'node:crypto';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { WorkerId } from '@molf/protocol';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createTempDir } from '../testing/test-link.ts';
import type { ServerTool } from '../tools/index.ts';
import { SERVER_VERSION } from '../version.ts';
import { createServerServices } from './create-server-services.ts';

/** Listening sockets of this process: a TCP or pipe server is what "serving" would leave behind. */
const listeningHandles = () =>
  process.getActiveResourcesInfo().filter((name) => name === 'TCPServerWrap' || name === 'PipeServerWrap').length;

const clock: ServerTool<z.ZodObject<{ zone: z.ZodString }>> = {
  definition: {
    name: 'clock',
    description: 'Tells the time in a zone.',
    args: z.object({ zone: z.string() }),
    defaultTimeoutMs: 10_000,
  },
  async run(args) {
    return { output: `noon in ${args.zone}` };
  },
};

describe('createServerServices', () => {
  it('runs a server tool through the gate, with the decision in the audit log, without a socket or a port', async () => {
    await using data = await createTempDir();
    const before = listeningHandles();
    const services = await createServerServices({ dataDir: data.path, serverTools: [clock] });
    const workerId = randomUUID() as WorkerId;
    try {
      expect(listeningHandles()).toBe(before);
      const rules = services.permissions.pathOf(workerId);
      await mkdir(dirname(rules), { recursive: true });
      await writeFile(rules, '{ "*": "ask", "clock": "allow" }');

      const result = await services.toolCalls.run({
        sessionId: 'session-1',
        workerId,
        tool: 'clock',
        args: { zone: 'UTC' },
      });

      expect(result).toEqual({ output: 'noon in UTC' });
      expect(services.dispatcher.pendingCount()).toBe(0);
    } finally {
      await services.close();
    }
    const audit = (await readFile(join(data.path, 'audit', 'approvals.jsonl'), 'utf8')).trim().split('\n');
    expect(audit.map((line) => JSON.parse(line))).toEqual([
      expect.objectContaining({ workerId, sessionId: 'session-1', tool: 'clock', decision: 'allow' }),
    ]);
  });

  it('refuses a server tool the rules ask about while its worker is offline, asking nobody', async () => {
    await using data = await createTempDir();
    await using services = await createServerServices({ dataDir: data.path, serverTools: [clock] });
    const workerId = randomUUID() as WorkerId;
    const rules = services.permissions.pathOf(workerId);
    await mkdir(dirname(rules), { recursive: true });
    await writeFile(rules, '{ "*": "ask" }');

    const result = await services.toolCalls.run({
      sessionId: 'session-1',
      workerId,
      tool: 'clock',
      args: { zone: 'UTC' },
    });

    expect(result.meta?.errorKind).toBe('worker_offline');
    expect(services.gate.pending()).toEqual([]);
  });

  it('reports its health without listening: version, uptime and no workers yet', async () => {
    await using data = await createTempDir();
    await using services = await createServerServices({ dataDir: data.path });
    expect(services.health()).toEqual({
      status: 'ok',
      version: SERVER_VERSION,
      uptimeSeconds: expect.any(Number),
      workers: { online: 0, known: 0, sandbox: { on: 0, failed: 0, off: 0 } },
    });
  });

  it('generates a token for each role without one, which its credentials then accept in that role', async () => {
    await using data = await createTempDir();
    await using services = await createServerServices({
      dataDir: data.path,
      tokens: { worker: 'molf_w_fixed-worker-token-0123456789' },
      generateMissingTokens: true,
    });
    expect(Object.keys(services.generatedTokens)).toEqual(['client']);
    expect(services.credentials.verify(services.generatedTokens.client ?? '')?.role).toBe('admin');
  });

  it('refuses a fixed token shorter than 16 characters before touching the data directory', async () => {
    await using data = await createTempDir();
    const dataDir = join(data.path, 'not-yet');
    await expect(createServerServices({ dataDir, tokens: { client: 'molf_c_short' } })).rejects.toMatchObject({
      code: 'config_invalid',
      message: expect.stringContaining('too short'),
    });
    await expect(stat(dataDir)).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

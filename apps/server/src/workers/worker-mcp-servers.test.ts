import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createMolfClient } from '@molf/client/node';
import type { McpServerInfo, WorkerInfo } from '@molf/protocol';
import { FIXTURE_MCP_SERVER } from '@molf/testkit';
import { createWorker } from '@molf/worker';
import { describe, expect, it } from 'vitest';
import {
  approveMcpServerStarts,
  createTempDir,
  createTestRegistration,
  startTestServer,
  TEST_CLIENT_TOKEN,
  TEST_WORKER_TOKEN,
  waitFor,
} from '../testing/test-link.ts';

function errorCode(error: unknown): string | undefined {
  return (error as { data?: { code?: string } }).data?.code;
}

const server = (name: string, list: WorkerInfo[]): McpServerInfo | undefined =>
  list[0]?.mcpServers?.find((entry) => entry.name === name);

describe("a worker's MCP servers in the worker list", () => {
  it('shows each server with its status: one connected with its tools, one that cannot start offline with the reason', async () => {
    await using data = await createTempDir();
    await using project = await createTempDir();
    await writeFile(
      join(project.path, '.mcp.json'),
      JSON.stringify({
        mcpServers: {
          fixture: { type: 'stdio', command: process.execPath, args: [FIXTURE_MCP_SERVER] },
          broken: { type: 'stdio', command: 'molf-test-no-such-command' },
          off: { type: 'stdio', command: 'never-started', enabled: false },
        },
      }),
    );
    await using molf = await startTestServer({ dataDir: data.path });
    await using worker = await createWorker({ serverUrl: molf.url, token: TEST_WORKER_TOKEN, workdir: project.path });
    await worker.registered;
    await using client = createMolfClient({ url: molf.url, token: TEST_CLIENT_TOKEN });
    await client.ready();
    const list = () => client.rpc.workers.list.query();

    // New servers wait for a person before they start; the list says so.
    await waitFor(async () => server('fixture', await list())?.status === 'awaiting_approval', {
      what: 'the servers awaiting approval',
    });
    expect(server('off', await list())).toEqual({ name: 'off', type: 'stdio', status: 'disabled', tools: [] });

    await approveMcpServerStarts(molf, worker.workerId, 2);
    await waitFor(
      async () => {
        const workers = await list();
        return server('fixture', workers)?.status === 'connected' && server('broken', workers)?.status === 'offline';
      },
      { what: 'one server connected and one offline' },
    );
    const [info] = await list();
    expect(server('fixture', [info as WorkerInfo])).toMatchObject({
      type: 'stdio',
      tools: expect.arrayContaining(['fixture_echo', 'fixture_env']),
    });
    expect(server('broken', [info as WorkerInfo])).toMatchObject({
      tools: [],
      reason: expect.stringContaining('molf-test-no-such-command'),
    });
    // Built-in tools and MCP tools are told apart; both are offered.
    expect(info?.builtinTools).toEqual(expect.arrayContaining(['shell_exec', 'read_file']));
    expect(info?.builtinTools).not.toContain('fixture_echo');
    expect(info?.tools).toEqual(expect.arrayContaining(['shell_exec', 'fixture_echo']));
    expect(info?.mcpServers?.map((entry) => entry.name)).toEqual(['broken', 'fixture', 'off']);

    // Offline, the states are not shown (nobody knows them); the tools last seen are.
    await worker.close();
    await waitFor(async () => (await list())[0]?.state === 'offline', { what: 'the worker offline' });
    const [offline] = await list();
    expect(offline?.mcpServers).toBeUndefined();
    expect(offline?.builtinTools).not.toContain('fixture_echo');
  });

  it('refuses a malformed or oversized snapshot and drops one older than the snapshot it holds', async () => {
    await using data = await createTempDir();
    await using molf = await startTestServer({ dataDir: data.path });
    await using workerClient = createMolfClient({ url: molf.url, token: TEST_WORKER_TOKEN });
    const registration = createTestRegistration(['echo']);
    await new Promise<void>((resolve) => {
      workerClient.rpc.worker.jobs.subscribe(
        { registration },
        { onData: ({ data: message }) => message.type === 'registered' && resolve() },
      );
    });
    const { workerId, instanceId } = registration;
    const send = (mcp: unknown, from = instanceId) =>
      workerClient.rpc.worker.mcpServers.mutate({ workerId, instanceId: from, mcp } as never);
    const ready = { name: 'one', type: 'stdio', status: 'connected', tools: ['one_a'] };

    for (const bad of [
      { version: 1, servers: [{ ...ready, status: 'happy' }] },
      { version: 1, servers: [{ ...ready, reason: 'x'.repeat(1_001) }] },
      { version: 1, servers: Array.from({ length: 257 }, (_, index) => ({ ...ready, name: `s${index}` })) },
      { version: -1, servers: [] },
    ]) {
      await expect(send(bad)).rejects.toSatisfy((error) => errorCode(error) === 'invalid_input');
    }
    expect(await send({ version: 2, servers: [ready] })).toEqual({ updated: true });
    expect(await send({ version: 1, servers: [] })).toEqual({ updated: false });
    expect(await send({ version: 3, servers: [] }, randomUUID())).toEqual({ updated: false });
    expect(molf.registry.get(workerId)?.mcpServers).toEqual([ready]);
    // A worker that predates the field: every tool counts as built-in.
    expect(molf.registry.get(workerId)?.builtinTools).toEqual(['echo']);
  });
});

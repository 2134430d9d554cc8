import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { createMolfClient } from '@molf/client/node';
import type { WorkerEvent } from '@molf/protocol';
import { createWorker } from '@molf/worker';
import { describe, expect, it } from 'vitest';
import {
  approveMcpServerStarts,
  createTempDir,
  startTestServer,
  TEST_CLIENT_TOKEN,
  TEST_WORKER_TOKEN,
  waitFor,
} from '../testing/test-link.ts';

describe('workers.events', () => {
  it('starts with the worker as it is, then follows its MCP server going offline, the worker leaving and coming back', async () => {
    await using data = await createTempDir();
    await using project = await createTempDir();
    await writeFile(
      join(project.path, '.mcp.json'),
      JSON.stringify({ mcpServers: { broken: { type: 'stdio', command: 'molf-test-no-such-command' } } }),
    );
    await using molf = await startTestServer({ dataDir: data.path });
    const first = await createWorker({ serverUrl: molf.url, token: TEST_WORKER_TOKEN, workdir: project.path });
    await first.registered;
    const { workerId } = first;
    await using client = createMolfClient({ url: molf.url, token: TEST_CLIENT_TOKEN });
    await client.ready();
    const events: WorkerEvent[] = [];
    const subscription = client.rpc.workers.events.subscribe({ workerId }, { onData: (event) => events.push(event) });
    const second = { worker: undefined as Awaited<ReturnType<typeof createWorker>> | undefined };
    try {
      await waitFor(() => events.length > 0, { what: 'the first event' });
      expect(events[0]).toMatchObject({ type: 'worker.changed', worker: { workerId, state: 'online' } });

      await approveMcpServerStarts(molf, workerId);
      const brokenOffline = () =>
        events.find(
          (event) =>
            event.type === 'worker.changed' &&
            event.worker.mcpServers?.some((server) => server.name === 'broken' && server.status === 'offline'),
        );
      await waitFor(() => brokenOffline() !== undefined, { what: 'the MCP server offline' });
      expect(brokenOffline()?.worker.mcpServers?.find((server) => server.name === 'broken')?.reason).toContain(
        'molf-test-no-such-command',
      );

      await first.close();
      await waitFor(() => events.some((event) => event.type === 'worker.disconnected'), {
        what: 'worker.disconnected',
      });
      expect(events.find((event) => event.type === 'worker.disconnected')?.worker).toMatchObject({
        workerId,
        state: 'offline',
      });

      second.worker = await createWorker({ serverUrl: molf.url, token: TEST_WORKER_TOKEN, workdir: project.path });
      await second.worker.registered;
      await waitFor(() => events.some((event) => event.type === 'worker.connected'), { what: 'worker.connected' });
      expect(events.find((event) => event.type === 'worker.connected')?.worker).toMatchObject({
        workerId,
        state: 'online',
      });
      // Only the followed worker's events, each with the worker whole.
      expect(events.every((event) => event.worker.workerId === workerId)).toBe(true);
    } finally {
      subscription.unsubscribe();
      await first.close();
      await second.worker?.close();
    }
  });

  it('shows a worker’s permissions file breaking as a change of the worker', async () => {
    await using data = await createTempDir();
    await using project = await createTempDir();
    await using molf = await startTestServer({ dataDir: data.path });
    await using worker = await createWorker({ serverUrl: molf.url, token: TEST_WORKER_TOKEN, workdir: project.path });
    await worker.registered;
    await using client = createMolfClient({ url: molf.url, token: TEST_CLIENT_TOKEN });
    await client.ready();
    const events: WorkerEvent[] = [];
    const subscription = client.rpc.workers.events.subscribe({}, { onData: (event) => events.push(event) });
    try {
      await waitFor(() => events.length > 0, { what: 'the first event' });
      expect(events[0]?.worker.permissionsProblem).toBeUndefined();
      const path = molf.permissions.pathOf(worker.workerId);
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, '{ "*": "ask" "grep": "allow" }');
      await waitFor(() => events.some((event) => event.worker.permissionsProblem !== undefined), {
        what: 'the problem in a worker event',
      });
      expect(events.at(-1)).toMatchObject({
        type: 'worker.changed',
        worker: {
          workerId: worker.workerId,
          permissionsProblem: { line: 1, column: 14, message: 'a comma is missing between two entries' },
        },
      });
    } finally {
      subscription.unsubscribe();
    }
  });
});

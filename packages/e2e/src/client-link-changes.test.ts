import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ConnectionChange, ConnectionStatus } from '@molf/client';
import { createMolfClient } from '@molf/client/node';
import { createServer } from '@molf/server';
import { afterEach, describe, expect, it } from 'vitest';

const cleanups: Array<() => Promise<unknown>> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function startServer() {
  const dataDir = await mkdtemp(join(tmpdir(), 'molf-client-'));
  cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
  const tokens = { client: 'molf_c_client-close-test-000001', worker: 'molf_w_client-close-test-000001' };
  const server = await createServer({ port: 0, dataDir, tokens });
  cleanups.push(() => server.close());
  return { server, tokens };
}

async function waitFor(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('a client and its link', () => {
  it('tells no lost link when it closes the link itself', async () => {
    const { server, tokens } = await startServer();
    const changes: ConnectionChange[] = [];
    const statuses: ConnectionStatus[] = [];
    const client = createMolfClient({
      url: server.url,
      token: tokens.client,
      onChange: (change) => changes.push(change),
      onStatus: (status) => statuses.push(status),
    });
    await client.ready();
    await waitFor(() => changes.some((change) => change.type === 'connected'), 'the link to be told connected');
    await client.close();
    // The socket's close is still reported as a status, once it has closed.
    await waitFor(() => statuses.some((status) => status.type === 'closed'), 'the socket to close');
    expect(changes).toEqual([{ type: 'connected', again: false }]);
  });

  it('tells a lost link when the server goes', async () => {
    const { server, tokens } = await startServer();
    const changes: ConnectionChange[] = [];
    const client = createMolfClient({
      url: server.url,
      token: tokens.client,
      retryDelayMs: () => 50,
      onChange: (change) => changes.push(change),
    });
    cleanups.push(() => client.close());
    await client.ready();
    await waitFor(() => changes.some((change) => change.type === 'connected'), 'the link to be told connected');
    await server.close();
    await waitFor(() => changes.some((change) => change.type === 'lost'), 'the loss to be told');
  });
});

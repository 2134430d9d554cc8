import { writeFile } from 'node:fs/promises';
import { createMolfClient } from '@molf/client/node';
import { describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { openCredentialStore } from './auth/credential-store.ts';
import { openFileStateDocuments } from './state/index.ts';
import {
  createTempDir,
  createTestRegistration,
  startTestServer,
  TEST_WORKER_TOKEN,
  waitFor,
} from './testing/test-link.ts';

describe('connections', () => {
  it('closes a socket that never sends its credentials', async () => {
    await using data = await createTempDir();
    await using server = await startTestServer({ dataDir: data.path, authTimeoutMs: 100 });
    const raw = new WebSocket(`${server.url}?connectionParams=1`);
    const code = await new Promise<number>((resolve) => raw.on('close', (closeCode) => resolve(closeCode)));
    expect(code).toBe(4401);
  });

  it('refuses sockets beyond the unauthenticated limit per address, and frees a slot on authentication', async () => {
    await using data = await createTempDir();
    await using server = await startTestServer({ dataDir: data.path, maxUnauthenticated: { perAddress: 2 } });
    const open = async () => {
      const socket = new WebSocket(`${server.url}?connectionParams=1`);
      const closed = new Promise<number>((resolve) => socket.on('close', (code) => resolve(code)));
      await new Promise((resolve) => socket.on('open', resolve));
      return { socket, closed };
    };
    const first = await open();
    await open();
    const third = await open();
    // Cut at once, without waiting for a close handshake a hostile peer would ignore.
    expect(await third.closed).toBe(1006);

    // Authenticating frees its slot for the next one, which can then authenticate too.
    const authenticate = async (socket: WebSocket) => {
      const answered = new Promise<unknown>((resolve) =>
        socket.once('message', (data) => resolve(JSON.parse(String(data)))),
      );
      socket.send(JSON.stringify({ method: 'connectionParams', data: { token: TEST_WORKER_TOKEN } }));
      socket.send(JSON.stringify({ id: 1, method: 'query', params: { path: 'auth.whoami' } }));
      return answered;
    };
    expect(await authenticate(first.socket)).toMatchObject({ id: 1, result: { data: { role: 'worker' } } });
    const fourth = await open();
    expect(await authenticate(fourth.socket)).toMatchObject({ id: 1, result: { data: { role: 'worker' } } });
  });

  it('keeps a live connection’s credential "last used" near now, not at the day it connected', async () => {
    await using data = await createTempDir();
    await using server = await startTestServer({ dataDir: data.path, lastUsedRefreshMs: 20 });
    const { token, credential } = await server.credentials.create({ role: 'viewer', label: 'wall screen' });
    await using client = createMolfClient({ url: server.url, token });
    await client.ready();
    const lastUsed = () =>
      Date.parse(server.credentials.list().find((entry) => entry.id === credential.id)?.lastUsedAt ?? '') || 0;
    const connectedAt = lastUsed();
    expect(connectedAt).toBeGreaterThan(0);
    // Nothing new authenticates; only the open connection says the credential is still in use.
    await waitFor(() => lastUsed() > connectedAt, { what: 'the live connection to renew "last used"' });
  });

  it('closes open connections whose credential is revoked, and refuses them from then on', async () => {
    await using data = await createTempDir();
    await using server = await startTestServer({ dataDir: data.path, credentialsPollMs: 20 });
    const { token, credential } = await server.credentials.create({ role: 'admin', label: 'laptop' });
    const statuses: string[] = [];
    await using client = createMolfClient({
      url: server.url,
      token,
      retryDelayMs: () => 20,
      onStatus: (status) => statuses.push(status.type),
    });
    await client.ready();

    // Revoked from another process, as `molf token revoke` does.
    const documents = openFileStateDocuments({ dataDir: data.path });
    expect(await openCredentialStore({ documents }).revoke(credential.id)).toBe(true);
    await waitFor(() => statuses.includes('rejected'), { what: 'the revoked connection to be refused' });
    expect(statuses).toContain('closed');
  });

  it('answers a refused token check with its code on the wire: unauthorized without a token, internal when the credentials file is broken', async () => {
    await using data = await createTempDir();
    await using server = await startTestServer({ dataDir: data.path });
    const { token } = await server.credentials.create({ role: 'admin', label: 'laptop' });
    const answerTo = async (params: Record<string, string>) => {
      const raw = new WebSocket(`${server.url}?connectionParams=1`);
      const answer = new Promise<unknown>((resolve) =>
        raw.once('message', (frame) => resolve(JSON.parse(String(frame)))),
      );
      await new Promise((resolve) => raw.on('open', resolve));
      raw.send(JSON.stringify({ method: 'connectionParams', data: params }));
      try {
        return await answer;
      } finally {
        raw.terminate();
      }
    };

    expect(await answerTo({})).toMatchObject({
      id: null,
      error: { code: -32001, message: expect.stringMatching(/^no token/), data: { code: 'unauthorized' } },
    });
    await writeFile(server.credentials.where, 'not json');
    expect(await answerTo({ token })).toMatchObject({
      id: null,
      error: {
        code: -32603,
        message: expect.stringContaining('credentials.json is not valid JSON'),
        data: { code: 'internal' },
      },
    });
  });

  it('drops a worker that stops answering pings and marks it offline', async () => {
    await using data = await createTempDir();
    await using server = await startTestServer({ dataDir: data.path, keepAlive: { pingMs: 50, pongWaitMs: 50 } });
    const registration = createTestRegistration(['echo']);
    // A raw socket that authenticates and registers, then ignores the server's PINGs.
    const raw = new WebSocket(`${server.url}?connectionParams=1`);
    await new Promise((resolve) => raw.on('open', resolve));
    raw.send(JSON.stringify({ method: 'connectionParams', data: { token: TEST_WORKER_TOKEN } }));
    raw.send(
      JSON.stringify({ id: 1, method: 'subscription', params: { path: 'worker.jobs', input: { registration } } }),
    );
    await waitFor(() => server.registry.get(registration.workerId)?.state === 'online', { what: 'registration' });
    await new Promise((resolve) => raw.on('close', resolve));
    await waitFor(() => server.registry.get(registration.workerId)?.state === 'offline', { what: 'offline' });
  });

  it("sends each call with its own timeout, so a long shell command isn't cut at the default", async () => {
    await using data = await createTempDir();
    await using server = await startTestServer({ dataDir: data.path });
    const registration = createTestRegistration(['shell_exec']);
    await using client = createMolfClient({ url: server.url, token: TEST_WORKER_TOKEN });
    const timeouts: number[] = [];
    const sessions: Array<string | undefined> = [];
    client.rpc.worker.jobs.subscribe(
      { registration },
      {
        onData: ({ data }) => {
          if (data.type !== 'call') return;
          timeouts.push(data.job.timeoutMs);
          sessions.push(data.job.sessionId);
        },
      },
    );
    await waitFor(() => server.registry.get(registration.workerId)?.state === 'online', { what: 'registration' });

    const controller = new AbortController();
    const pending = server.dispatcher.dispatch({
      workerId: registration.workerId,
      toolName: 'shell_exec',
      args: { command: 'sleep 300', timeout: 300_000 },
      sessionId: 'session-1',
      signal: controller.signal,
    });
    await waitFor(() => timeouts.length === 1, { what: 'the call' });
    expect(timeouts).toEqual([300_000]);
    expect(sessions).toEqual(['session-1']);
    controller.abort();
    expect((await pending).meta?.errorKind).toBe('cancelled');
  });
});

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMolfClient, followSession } from '@molf/client/node';
import type { SessionEvent, WorkerId } from '@molf/protocol';
import { createServer, type MolfServer } from '@molf/server';
import { afterEach, describe, expect, it } from 'vitest';
import { startTcpRelay } from './tcp-relay.ts';

const TOKENS = { client: 'molf_c_restart-test-client-0123456789', worker: 'molf_w_restart-test-worker-0123456789' };
const WORKER_ID = '6f1d7a52-8a4e-4c1b-9a57-2f0c3d4e5b6a' as WorkerId;

const cleanups: Array<() => Promise<unknown>> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function until(predicate: () => boolean | Promise<boolean>, what: string, pollMs = 10): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}

/**
 * A server on a data directory, which can be stopped and started again on the same port with the
 * same data (as `molf up` restarts), and a relay in front of it that can hold what clients send.
 */
async function startRestartableServer() {
  const dataDir = await mkdtemp(join(tmpdir(), 'molf-restart-'));
  cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
  let server: MolfServer | undefined = await createServer({ port: 0, dataDir, tokens: TOKENS });
  const { port } = server;
  cleanups.push(() => server?.close() ?? Promise.resolve());
  const relay = await startTcpRelay({ targetPort: port });
  cleanups.push(() => relay.close());
  return {
    relay,
    /** Where clients connect: through the relay. */
    url: `ws://127.0.0.1:${relay.port}`,
    /** The server itself. */
    directUrl: `ws://127.0.0.1:${port}`,
    server: () => server as MolfServer,
    async stop() {
      await server?.close();
      server = undefined;
    },
    async start() {
      server = await createServer({ port, dataDir, tokens: TOKENS });
    },
  };
}

function startClient(url: string) {
  const client = createMolfClient({ url, token: TOKENS.client, retryDelayMs: () => 50 });
  cleanups.push(() => client.close());
  return client;
}

describe('a client whose server restarts on its port', () => {
  it('answers a query that was in flight when the server stopped, from the server that comes back', async () => {
    const stack = await startRestartableServer();
    const { sessionId } = await stack.server().sessions.create({ workerId: WORKER_ID, name: 'kept' });
    const client = startClient(stack.url);
    await client.ready({ timeoutMs: 60_000 });

    stack.relay.hold();
    const answer = client.rpc.sessions.info.query({ sessionId });
    answer.catch(() => {});
    await until(() => stack.relay.heldBytes() > 0, 'the query to leave the client');
    await stack.stop();
    stack.relay.release();
    await stack.start();

    await expect(answer).resolves.toMatchObject({ sessionId, name: 'kept' });
  });

  it('fails a query waiting for the server to come back when the client is closed, saying so', async () => {
    const stack = await startRestartableServer();
    const { sessionId } = await stack.server().sessions.create({ workerId: WORKER_ID });
    const client = startClient(stack.url);
    await client.ready({ timeoutMs: 60_000 });

    stack.relay.hold();
    const answer = client.rpc.sessions.info.query({ sessionId });
    answer.catch(() => {});
    await until(() => stack.relay.heldBytes() > 0, 'the query to leave the client');
    await stack.stop();
    await client.close();

    await expect(answer).rejects.toThrow(
      `this client was closed before the server at ${stack.url} answered sessions.info`,
    );
  });

  it('fails a mutation that was in flight when the link was lost saying so, not "Unknown error"', async () => {
    const stack = await startRestartableServer();
    const client = startClient(stack.url);
    await client.ready({ timeoutMs: 60_000 });

    stack.relay.hold();
    const created = client.rpc.sessions.create.mutate({ workerId: WORKER_ID });
    created.catch(() => {});
    await until(() => stack.relay.heldBytes() > 0, 'the mutation to leave the client');
    await stack.stop();

    // Whether the server did it is unknown (it did not, here: the relay kept it): it is not sent again.
    await expect(created).rejects.toThrow(
      `the connection to the server at ${stack.url} was lost before it answered sessions.create: ` +
        'it may or may not have been done',
    );
  });
});

describe('following a session across a restart of the server', () => {
  it('tells no error and no end: what it loads is loaded again, and events come from the new server', async () => {
    const stack = await startRestartableServer();
    const { sessionId } = await stack.server().sessions.create({ workerId: WORKER_ID });
    const client = startClient(stack.url);
    await client.ready({ timeoutMs: 60_000 });

    const seen: SessionEvent[] = [];
    const errors: unknown[] = [];
    let backfills = 0;
    let ended = false;
    // The stream and the first load leave the client and are held: the server stops before answering.
    stack.relay.hold();
    const follower = followSession(client, {
      sessionId,
      onEvent: (event) => seen.push(event),
      onBackfill: () => {
        backfills += 1;
      },
      onError: (error) => errors.push(error),
      onEnded: () => {
        ended = true;
      },
    });
    cleanups.push(async () => follower.stop());
    await until(() => stack.relay.heldBytes() > 0, 'the stream and the load to leave the client');
    await stack.stop();
    stack.relay.release();
    await stack.start();

    await until(() => backfills === 1, 'the load to be done by the new server');
    // A change made on the new server reaches the follower: its stream was sent again.
    const other = startClient(stack.directUrl);
    let renames = 0;
    await until(
      async () => {
        renames += 1;
        await other.rpc.sessions.rename.mutate({ sessionId, name: `renamed ${renames}` });
        return seen.some((event) => event.type === 'session.renamed');
      },
      'a rename on the new server to reach the follower',
      200,
    );
    expect(errors.map((error) => (error as Error).message)).toEqual([]);
    expect(ended).toBe(false);
  });

  it('tells the end of the stream when the session is deleted, and not when its own client closes', async () => {
    const stack = await startRestartableServer();
    const client = startClient(stack.directUrl);
    await client.ready({ timeoutMs: 60_000 });
    const follow = async (sessionId: string) => {
      const follower = { backfilled: false, ended: false };
      const handle = followSession(client, {
        sessionId,
        onEvent: () => {},
        onBackfill: () => {
          follower.backfilled = true;
        },
        onEnded: () => {
          follower.ended = true;
        },
      });
      cleanups.push(async () => handle.stop());
      await until(() => follower.backfilled, 'the follower to load');
      return follower;
    };

    const sessions = stack.server().sessions;
    const gone = await sessions.create({ workerId: WORKER_ID });
    const deleted = await follow(gone.sessionId);
    const kept = await follow((await sessions.create({ workerId: WORKER_ID })).sessionId);
    await client.rpc.sessions.delete.mutate({ sessionId: gone.sessionId });
    await until(() => deleted.ended, 'the end of the deleted session to be told');

    await client.close();
    // Closing completes every subscription on the client; the session was not deleted.
    expect(kept.ended).toBe(false);
  });
});

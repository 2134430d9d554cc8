import { randomUUID } from 'node:crypto';
import { access, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { createMolfClient, type MolfClient } from '@molf/client/node';
import { createLogger } from '@molf/logging';
import type { Approval } from '@molf/protocol';
import { createWorker, type MolfWorker } from '@molf/worker';
import { describe, expect, it } from 'vitest';
import type { MolfServer } from '../create-server.ts';
import { openFileStateDocuments } from '../state/index.ts';
import { createTestDatabase, postgresUnavailable } from '../testing/test-database.ts';
import {
  createTempDir,
  FAST_RECONNECT,
  startTestServer,
  TEST_CLIENT_TOKEN,
  TEST_WORKER_TOKEN,
  waitFor,
} from '../testing/test-link.ts';
import { createSessionGrants, sessionGrantsDocument } from './session-grants.ts';

const unavailable = postgresUnavailable();

async function clientOf(server: MolfServer): Promise<MolfClient> {
  const client = createMolfClient({ url: server.url, token: TEST_CLIENT_TOKEN });
  await client.ready();
  return client;
}

/** A shell command of the session, run on `server`'s worker through the gate. */
function runShell(server: MolfServer, worker: MolfWorker, sessionId: string, command: string) {
  return server.toolCalls.run({
    workerId: worker.workerId,
    sessionId,
    tool: 'shell_exec',
    args: { command },
    timeoutMs: 10_000,
  });
}

/** Runs a shell command of the session on `server`'s worker; fails as soon as the gate asks. */
async function runWithoutAsking(server: MolfServer, worker: MolfWorker, sessionId: string, command: string) {
  await using client = await clientOf(server);
  const result = runShell(server, worker, sessionId, command);
  let done = false;
  const asked = waitFor(async () => done || (await client.rpc.approvals.list.query({ sessionId })).length > 0, {
    what: 'an approval',
  }).then(() => {
    if (!done) throw new Error(`the gate asked again about ${command}`);
  });
  try {
    return await Promise.race([result, asked.then(() => result)]);
  } finally {
    done = true;
    await asked.catch(() => {});
  }
}

/** Runs the command, which asks, and answers "allow for this session". */
async function allowForSession(server: MolfServer, worker: MolfWorker, sessionId: string, command: string) {
  await using client = await clientOf(server);
  const result = runShell(server, worker, sessionId, command);
  let approvals: Approval[] = [];
  await waitFor(
    async () => {
      approvals = await client.rpc.approvals.list.query({ sessionId });
      return approvals.length === 1;
    },
    { what: 'the approval' },
  );
  const [approval] = approvals;
  await client.rpc.approvals.approve.mutate({ sessionId, approvalId: approval?.approvalId ?? '', scope: 'session' });
  return result;
}

describe('answers for a session', () => {
  it('hold after the server restarts, and go with the session when it is deleted', async () => {
    await using data = await createTempDir();
    await using workdir = await createTempDir();
    const first = await startTestServer({ dataDir: data.path });
    await using worker = await createWorker({
      serverUrl: first.url,
      token: TEST_WORKER_TOKEN,
      workdir: workdir.path,
      reconnect: FAST_RECONNECT,
    });
    await worker.registered;
    let session: { sessionId: string };
    {
      await using client = await clientOf(first);
      session = await client.rpc.sessions.create.mutate({ workerId: worker.workerId });
    }
    expect((await allowForSession(first, worker, session.sessionId, 'echo one')).output).toContain('one');
    await first.close();

    await using second = await startTestServer({ dataDir: data.path, port: first.port });
    await waitFor(() => second.registry.get(worker.workerId)?.state === 'online', { what: 'the worker back' });
    expect((await runWithoutAsking(second, worker, session.sessionId, 'echo two')).output).toContain('two');

    const kept = join(data.path, ...sessionGrantsDocument(session.sessionId).split('/'));
    expect(JSON.parse(await readFile(kept, 'utf8'))).toEqual({
      rules: [{ tool: 'shell_exec', pattern: 'echo *' }],
      acceptEdits: false,
    });
    await using client = await clientOf(second);
    await client.rpc.sessions.delete.mutate({ sessionId: session.sessionId });
    await waitFor(
      () =>
        access(kept).then(
          () => false,
          () => true,
        ),
      { what: 'the grants deleted with the session' },
    );
  });

  it.skipIf(unavailable !== undefined)(
    'hold on every server of a cluster: a worker that moves to another server keeps them',
    async () => {
      await using created = await createTestDatabase();
      await using workdir = await createTempDir();
      await using dataOne = await createTempDir();
      await using dataTwo = await createTempDir();
      const database = { url: created.url, maxConnections: 4 };
      await using one = await startTestServer({ dataDir: dataOne.path, database });
      await using two = await startTestServer({ dataDir: dataTwo.path, database });
      const sessionId = randomUUID();
      {
        await using worker = await createWorker({
          serverUrl: one.url,
          token: TEST_WORKER_TOKEN,
          workdir: workdir.path,
        });
        await worker.registered;
        expect((await allowForSession(one, worker, sessionId, 'echo one')).output).toContain('one');
      }
      // The worker now connects to the other server, and the session's calls are judged there.
      await using moved = await createWorker({ serverUrl: two.url, token: TEST_WORKER_TOKEN, workdir: workdir.path });
      await moved.registered;
      expect((await runWithoutAsking(two, moved, sessionId, 'echo two')).output).toContain('two');
    },
  );
});

describe('session grants kept as a document', () => {
  it('reads a damaged document as no grants (the calls ask again), and an answer writes a sound one', async () => {
    await using data = await createTempDir();
    const documents = openFileStateDocuments({ dataDir: data.path });
    const lines: string[] = [];
    const logger = await createLogger({
      name: 'server',
      level: 'warn',
      destination: new Writable({
        write(chunk, _encoding, callback) {
          lines.push(String(chunk));
          callback();
        },
      }),
    });
    const grants = createSessionGrants({ documents, logger });
    const sessionId = randomUUID();
    try {
      await documents.write(sessionGrantsDocument(sessionId), '{"rules": "everything", "acceptEdits": true}');
      expect(grants.of(sessionId)).toEqual({ rules: [], acceptEdits: false });
      expect(lines.map((line) => JSON.parse(line).msg)).toEqual(['cannot read a session’s grants: ignored']);

      await grants.add(sessionId, { rules: [{ tool: 'shell_exec', pattern: 'npm test' }] });
      await grants.add(sessionId, { rules: [{ tool: 'shell_exec', pattern: 'npm test' }], acceptEdits: true });
      expect(grants.of(sessionId)).toEqual({
        rules: [{ tool: 'shell_exec', pattern: 'npm test', action: 'allow', source: { layer: 'session' } }],
        acceptEdits: true,
      });
      // Another session's are its own.
      expect(grants.of(randomUUID())).toEqual({ rules: [], acceptEdits: false });
      await grants.remove(sessionId);
      expect(grants.of(sessionId)).toEqual({ rules: [], acceptEdits: false });
    } finally {
      await documents.close();
    }
  });
});

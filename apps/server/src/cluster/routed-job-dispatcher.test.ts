import { randomUUID } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ToolCallId } from '@molf/protocol';
import { describe, expect, it } from 'vitest';
import type { MolfServer } from '../create-server.ts';
import { createTestDatabase, postgresUnavailable, withDatabase } from '../testing/test-database.ts';
import { createTempDir, startTestLink, startTestServer, waitFor } from '../testing/test-link.ts';

const unavailable = postgresUnavailable();

/** Two servers on one database, a real worker connected to the first. */
async function twoServers() {
  const database = await createTestDatabase();
  const settings = { database: { url: database.url, maxConnections: 4 } };
  const link = await startTestLink({ server: settings });
  const data = await createTempDir();
  const other = await startTestServer({ dataDir: data.path, ...settings });
  const { workerId } = link.worker;
  // The second server knows the worker is connected to the first, with its tools.
  await waitFor(() => other.registry.registration(workerId) !== undefined, { what: 'the worker seen elsewhere' });
  return {
    url: database.url,
    here: link.server,
    elsewhere: other,
    workerId,
    workdir: link.workdir,
    async [Symbol.asyncDispose]() {
      await other.close();
      await link[Symbol.asyncDispose]();
      await data[Symbol.asyncDispose]();
      await database[Symbol.asyncDispose]();
    },
  };
}

const readCall = (server: MolfServer, workerId: string, path: string, extra: object = {}) =>
  server.dispatcher.dispatch({
    workerId: workerId as never,
    toolName: 'read_file',
    args: { path },
    ...extra,
  });

describe.skipIf(unavailable !== undefined)(
  `tool calls routed through the database${unavailable === undefined ? '' : ` (skipped: ${unavailable})`}`,
  () => {
    it('runs a call asked on a server that does not hold the worker, and answers a request there too', async () => {
      await using cluster = await twoServers();
      await writeFile(join(cluster.workdir, 'notes.txt'), 'routed\n');
      await writeFile(join(cluster.workdir, 'AGENTS.md'), 'be brief\n');
      expect(cluster.elsewhere.registry.connectedHere(cluster.workerId)).toBeUndefined();
      const result = await readCall(cluster.elsewhere, cluster.workerId, 'notes.txt');
      expect(result.error).toBeUndefined();
      expect(result.output).toContain('routed');
      const outcome = await cluster.elsewhere.dispatcher.request({
        workerId: cluster.workerId,
        request: { method: 'instructions/read', params: {} },
        timeoutMs: 10_000,
      });
      expect(outcome).toMatchObject({ ok: true, result: { files: [expect.objectContaining({ text: 'be brief\n' })] } });
    });

    it('gives the stored outcome of a call to the server that takes over its turn, found by step and call id', async () => {
      await using cluster = await twoServers();
      await writeFile(join(cluster.workdir, 'notes.txt'), 'once\n');
      const step = { stepId: randomUUID(), sessionToolCallId: 'call_1' };
      const sessionId = randomUUID();
      const first = await readCall(cluster.here, cluster.workerId, 'notes.txt', { sessionId, step });
      expect(first.output).toContain('once');
      // Another server, after the first one died: the outcome is there, the worker is not asked again.
      const found = await cluster.elsewhere.dispatcher.reattach({ sessionId, step });
      expect(found).toEqual(first);
      // A call of another step (a provider reusing its ids) or never sent is not found.
      expect(
        await cluster.elsewhere.dispatcher.reattach({ sessionId, step: { ...step, stepId: randomUUID() } }),
      ).toBeUndefined();
    });

    it('refuses a call id already used, and answers an aborted call at once', async () => {
      await using cluster = await twoServers();
      await writeFile(join(cluster.workdir, 'notes.txt'), 'x\n');
      const toolCallId = `tc_${randomUUID()}` as ToolCallId;
      await readCall(cluster.here, cluster.workerId, 'notes.txt', { toolCallId });
      const again = await readCall(cluster.elsewhere, cluster.workerId, 'notes.txt', { toolCallId });
      expect(again.meta?.errorKind).toBe('invalid_arguments');

      const controller = new AbortController();
      const running = cluster.elsewhere.dispatcher.dispatch({
        workerId: cluster.workerId,
        toolName: 'shell_exec',
        args: { command: 'sleep 60' },
        signal: controller.signal,
      });
      // Aborted while the job is being written, and again once a worker runs it.
      controller.abort();
      expect((await running).meta?.errorKind).toBe('cancelled');
      const later = new AbortController();
      const started = cluster.elsewhere.dispatcher.dispatch({
        workerId: cluster.workerId,
        toolName: 'shell_exec',
        args: { command: 'echo started > started.txt; sleep 60' },
        signal: later.signal,
      });
      await waitFor(async () => (await readFile(join(cluster.workdir, 'started.txt'), 'utf8').catch(() => '')) !== '', {
        what: 'the command started on the worker',
      });
      later.abort();
      expect((await started).meta?.errorKind).toBe('cancelled');
      await waitFor(() => cluster.here.dispatcher.pendingCount(cluster.workerId) === 0, {
        what: 'the call cancelled on the server holding the worker',
      });
    });

    it('never sends a worker a job whose time ran out (left by servers that died), and sends the others', async () => {
      await using cluster = await twoServers();
      await withDatabase(cluster.url, async (database) => {
        const leave = (file: string, deadline: string) => {
          const toolCallId = `tc_${randomUUID()}`;
          const job = { toolCallId, toolName: 'shell_exec', args: { command: `echo x > ${file}` }, timeoutMs: 10_000 };
          return database.sql`
            insert into worker_jobs (job_id, worker_id, kind, job, requester, deadline_at)
            values (${toolCallId}, ${cluster.workerId}, 'call', ${JSON.stringify({ kind: 'call', job })}, 'gone',
              now() + ${deadline}::interval)`;
        };
        await leave('stale.txt', '-1 second');
        await leave('fresh.txt', '1 hour');
      });
      // Found by the server holding the worker when it looks for jobs it missed.
      await waitFor(async () => (await readFile(join(cluster.workdir, 'fresh.txt'), 'utf8').catch(() => '')) !== '', {
        what: 'the job still in time sent to the worker',
      });
      await expect(readFile(join(cluster.workdir, 'stale.txt'), 'utf8')).rejects.toMatchObject({ code: 'ENOENT' });
    });

    it('refuses a result nobody asked for, on any server', async () => {
      await using cluster = await twoServers();
      expect(
        await cluster.elsewhere.dispatcher.acceptResult({
          workerId: cluster.workerId,
          toolCallId: `tc_${randomUUID()}` as ToolCallId,
          result: { output: 'unasked' },
        }),
      ).toBe(false);
    });
  },
);

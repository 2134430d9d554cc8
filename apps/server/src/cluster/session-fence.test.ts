import { randomUUID } from 'node:crypto';
import { createSilentLogger } from '@molf/logging';
import type { WorkerId } from '@molf/protocol';
import { describe, expect, it } from 'vitest';
import { createPostgresSessionStore } from '../sessions/postgres-session-store.ts';
import { assistantMessage } from '../testing/session-test-data.ts';
import { openTestDatabase, postgresUnavailable } from '../testing/test-database.ts';
import { openPostgresSessionLeases } from './postgres-session-leases.ts';

const logger = createSilentLogger();
const unavailable = postgresUnavailable();

/** Two instances on one database, each with its leases and its fenced session store. */
async function twoInstances() {
  const opened = await openTestDatabase();
  const instances = await Promise.all(
    [0, 1].map(async () => {
      const leases = await openPostgresSessionLeases({ database: opened.database, logger });
      return { leases, store: createPostgresSessionStore({ database: opened.database, fence: leases }) };
    }),
  );
  const [one, two] = instances as [(typeof instances)[number], (typeof instances)[number]];
  return {
    one,
    two,
    sql: opened.database.sql,
    async [Symbol.asyncDispose]() {
      await Promise.all(instances.map((instance) => instance.leases.close()));
      await opened[Symbol.asyncDispose]();
    },
  };
}

describe.skipIf(unavailable !== undefined)(
  `the session store on several instances${unavailable === undefined ? '' : ` (skipped: ${unavailable})`}`,
  () => {
    it('stores a message only from the instance holding the session’s lease; another’s is refused and not stored', async () => {
      await using cluster = await twoInstances();
      const { sessionId } = await cluster.one.store.create({ workerId: randomUUID() as WorkerId });
      expect(await cluster.one.leases.claim(sessionId)).toBe(true);
      await cluster.one.store.append(sessionId, assistantMessage({ text: 'by the holder' }));
      await expect(cluster.two.store.append(sessionId, assistantMessage({ text: 'by another' }))).rejects.toMatchObject(
        {
          code: 'conflict',
        },
      );
      // Without any lease, nobody writes either.
      await cluster.one.leases.release(sessionId);
      await expect(
        cluster.one.store.append(sessionId, assistantMessage({ text: 'after release' })),
      ).rejects.toMatchObject({
        code: 'conflict',
      });
      const texts = (await cluster.two.store.messages(sessionId)).map((message) => 'text' in message && message.text);
      expect(texts).toEqual(['by the holder']);
      expect((await cluster.two.store.get(sessionId))?.messageCount).toBe(1);
    });

    it('stores a session’s status only from the instance holding its lease: a late idle cannot end another’s turn', async () => {
      await using cluster = await twoInstances();
      const { sessionId } = await cluster.one.store.create({ workerId: randomUUID() as WorkerId });
      expect(await cluster.one.leases.claim(sessionId)).toBe(true);
      await cluster.one.store.setStatus(sessionId, 'busy');
      await expect(cluster.two.store.setStatus(sessionId, 'idle')).rejects.toMatchObject({ code: 'conflict' });
      expect((await cluster.two.store.get(sessionId))?.status).toBe('busy');
      // The lease moves: the old holder's status is refused, the new one's stored.
      await cluster.one.leases.release(sessionId);
      expect(await cluster.two.leases.claim(sessionId)).toBe(true);
      await expect(cluster.one.store.setStatus(sessionId, 'idle')).rejects.toMatchObject({ code: 'conflict' });
      await cluster.two.store.setStatus(sessionId, 'idle');
      expect((await cluster.one.store.get(sessionId))?.status).toBe('idle');
    });

    it('takes a queued prompt out of the queue in the statement that stores it in the history, and only then', async () => {
      await using cluster = await twoInstances();
      const { sessionId } = await cluster.one.store.create({ workerId: randomUUID() as WorkerId });
      const prompt = { messageId: randomUUID(), text: 'waiting', at: new Date().toISOString() };
      await cluster.two.store.enqueue(sessionId, prompt);
      const stored = { id: prompt.messageId, at: prompt.at, role: 'user' as const, text: prompt.text };
      // Refused (no lease): it stays queued.
      await expect(cluster.one.store.append(sessionId, stored)).rejects.toMatchObject({ code: 'conflict' });
      expect((await cluster.one.store.queued(sessionId)).map((queued) => queued.messageId)).toEqual([prompt.messageId]);
      expect(await cluster.one.leases.claim(sessionId)).toBe(true);
      await cluster.one.store.append(sessionId, stored);
      expect(await cluster.one.store.queued(sessionId)).toEqual([]);
      expect((await cluster.two.store.messages(sessionId)).map((message) => message.id)).toEqual([prompt.messageId]);
    });

    it('refuses a write that arrives after the lease expired on the database’s clock, before anyone took it', async () => {
      await using cluster = await twoInstances();
      const { sessionId } = await cluster.one.store.create({ workerId: randomUUID() as WorkerId });
      expect(await cluster.one.leases.claim(sessionId)).toBe(true);
      await cluster.sql`update session_leases set expires_at = now() - interval '1 second' where session_id = ${sessionId}`;
      await expect(cluster.one.store.append(sessionId, assistantMessage({ text: 'late' }))).rejects.toMatchObject({
        code: 'conflict',
      });
      expect(await cluster.one.store.messages(sessionId)).toEqual([]);
    });

    it('lets a subagent’s session be written by the holder of its top session’s lease, and nobody else', async () => {
      await using cluster = await twoInstances();
      const top = await cluster.one.store.create({ workerId: randomUUID() as WorkerId });
      const child = await cluster.one.store.create({
        workerId: top.workerId,
        parent: { sessionId: top.sessionId, toolCallId: 'call_1', agent: 'explore' },
      });
      const grandchild = await cluster.one.store.create({
        workerId: top.workerId,
        parent: { sessionId: child.sessionId, toolCallId: 'call_2', agent: 'explore' },
      });
      expect(await cluster.one.leases.claim(top.sessionId)).toBe(true);
      await cluster.one.store.append(child.sessionId, assistantMessage({ text: 'child' }));
      await cluster.one.store.append(grandchild.sessionId, assistantMessage({ text: 'grandchild' }));
      await expect(
        cluster.two.store.append(grandchild.sessionId, assistantMessage({ text: 'not the holder' })),
      ).rejects.toMatchObject({
        code: 'conflict',
      });
      expect(await cluster.two.store.messages(grandchild.sessionId)).toHaveLength(1);
    });

    it('still says a session is not found when it does not exist', async () => {
      await using cluster = await twoInstances();
      await expect(cluster.one.store.append(randomUUID(), assistantMessage({ text: 'nowhere' }))).rejects.toMatchObject(
        {
          code: 'session_not_found',
        },
      );
    });
  },
);

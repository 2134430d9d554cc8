import { randomUUID } from 'node:crypto';
import { createSilentLogger } from '@molf/logging';
import type { WorkerId } from '@molf/protocol';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../database/index.ts';
import { createPostgresSessionStore } from '../sessions/postgres-session-store.ts';
import { startTcpProxy } from '../testing/tcp-proxy.ts';
import { openTestDatabase, postgresUnavailable } from '../testing/test-database.ts';
import { openPostgresSessionLeases } from './postgres-session-leases.ts';

const logger = createSilentLogger();
const unavailable = postgresUnavailable();

describe.skipIf(unavailable !== undefined)(
  `session leases on PostgreSQL${unavailable === undefined ? '' : ` (skipped: ${unavailable})`}`,
  () => {
    it('keeps a lease let go and claimed again while a renewal was on its way: the renewal cannot lose the new claim', async () => {
      await using opened = await openTestDatabase();
      // Renewals back to back, so that many of them cross a release and the claim after it.
      const leases = await openPostgresSessionLeases({
        database: opened.database,
        logger,
        timings: { leaseMs: 10_000, renewMs: 1 },
      });
      try {
        const store = createPostgresSessionStore({ database: opened.database });
        const sessions = await Promise.all(
          Array.from({ length: 4 }, () => store.create({ workerId: randomUUID() as WorkerId })),
        );
        const lost: string[] = [];
        leases.onLost((sessionId) => lost.push(sessionId));
        for (const { sessionId } of sessions) expect(await leases.claim(sessionId)).toBe(true);
        for (let round = 0; round < 150; round += 1) {
          await Promise.all(
            sessions.map(async ({ sessionId }) => {
              await leases.release(sessionId);
              expect(await leases.claim(sessionId)).toBe(true);
            }),
          );
        }
        expect(lost).toEqual([]);
        for (const { sessionId } of sessions) expect(leases.holds(sessionId)).toBe(true);
      } finally {
        await leases.close();
      }
    });

    it('does not renew a lease that expired while the renewal was on its way: a late renewal cannot revive it', async () => {
      await using opened = await openTestDatabase();
      const address = new URL(opened.url);
      await using proxy = await startTcpProxy({ host: address.hostname, port: Number(address.port) });
      const throughProxy = new URL(opened.url);
      throughProxy.port = new URL(proxy.url).port;
      const slow = await openDatabase({ url: throughProxy.toString(), logger, maxConnections: 2 });
      const leases = await openPostgresSessionLeases({
        database: slow,
        logger,
        timings: { leaseMs: 2_000, renewMs: 500 },
      });
      try {
        const { sessionId } = await createPostgresSessionStore({ database: opened.database }).create({
          workerId: randomUUID() as WorkerId,
        });
        const lost: string[] = [];
        leases.onLost((lostId) => lost.push(lostId));
        expect(await leases.claim(sessionId)).toBe(true);
        // The link stalls: the renewal sent now arrives after the lease expired.
        proxy.freeze();
        await new Promise((resolveLater) => setTimeout(resolveLater, 3_000));
        expect(lost).toEqual([sessionId]);
        proxy.thaw();
        await new Promise((resolveLater) => setTimeout(resolveLater, 1_500));
        const [row] = await opened.database.sql<{ live: boolean }[]>`
          select expires_at > now() as live from session_leases where session_id = ${sessionId}`;
        expect(row?.live ?? false).toBe(false);
      } finally {
        await leases.close();
        await slow.close();
      }
    });

    it('answers on release whether prompts wait in the queue, and lets another instance claim at once', async () => {
      await using opened = await openTestDatabase();
      const open = () => openPostgresSessionLeases({ database: opened.database, logger });
      const [one, other] = [await open(), await open()];
      try {
        const store = createPostgresSessionStore({ database: opened.database });
        const { sessionId } = await store.create({ workerId: randomUUID() as WorkerId });
        expect(await one.claim(sessionId)).toBe(true);
        expect(await other.claim(sessionId)).toBe(false);
        expect(await one.release(sessionId)).toEqual({ waiting: false });
        expect(one.holds(sessionId)).toBe(false);

        expect(await other.claim(sessionId)).toBe(true);
        await store.enqueue(sessionId, { messageId: 'queued', text: 'queued', at: new Date().toISOString() });
        expect(await other.release(sessionId)).toEqual({ waiting: true });
        expect(await one.claim(sessionId)).toBe(true);
        // Given back by one that does not hold it, a lease stays its holder's.
        await other.release(sessionId);
        expect(await other.claim(sessionId)).toBe(false);
      } finally {
        await Promise.all([one.close(), other.close()]);
      }
    });

    it('wakes every instance for a session, or the one named, with the worker it holds', async () => {
      await using opened = await openTestDatabase();
      const open = () => openPostgresSessionLeases({ database: opened.database, logger });
      const [one, other] = [await open(), await open()];
      try {
        const woken: string[] = [];
        one.onWake((sessionId, workerId) => woken.push(`one ${sessionId} ${workerId ?? '-'}`));
        other.onWake((sessionId, workerId) => woken.push(`other ${sessionId} ${workerId ?? '-'}`));
        const workerId = randomUUID();
        await one.wake('s1');
        await one.wake('s2', { instanceId: other.instanceId, workerId });
        await waitForLength(woken, 3);
        expect(woken.sort()).toEqual(['one s1 -', 'other s1 -', `other s2 ${workerId}`]);
      } finally {
        await Promise.all([one.close(), other.close()]);
      }
    });
  },
);

async function waitForLength(list: unknown[], length: number): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (list.length < length) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${length} wakes (got ${list.length})`);
    await new Promise((resolveLater) => setTimeout(resolveLater, 10));
  }
  // Anything more would come at once.
  await new Promise((resolveLater) => setTimeout(resolveLater, 200));
}

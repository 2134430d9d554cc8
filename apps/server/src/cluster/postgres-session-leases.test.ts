import { randomUUID } from 'node:crypto';
import { createSilentLogger } from '@molf/logging';
import type { WorkerId } from '@molf/protocol';
import { describe, expect, it } from 'vitest';
import { createPostgresSessionStore } from '../sessions/postgres-session-store.ts';
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
  },
);

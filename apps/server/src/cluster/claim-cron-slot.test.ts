import { randomUUID } from 'node:crypto';
import { createSilentLogger } from '@molf/logging';
import type { WorkerId } from '@molf/protocol';
import { describe, expect, it } from 'vitest';
import { type CronJobStore, openCronJobStore } from '../cron/cron-job-store.ts';
import { type CronScheduler, startCronScheduler } from '../cron/cron-scheduler.ts';
import { openDatabase } from '../database/index.ts';
import { openPostgresStateDocuments } from '../state/index.ts';
import { createFakeClock, createFakeFire, type FakeClock, type FakeFire, until } from '../testing/cron-fakes.ts';
import { createTestDatabase, postgresUnavailable } from '../testing/test-database.ts';
import { claimCronSlot } from './claim-cron-slot.ts';

const logger = createSilentLogger();
const unavailable = postgresUnavailable();
const MINUTE = 60_000;
const START = '2026-03-02T10:00:00.000Z';
const WORKER = randomUUID() as WorkerId;

type Server = {
  clock: FakeClock;
  fire: FakeFire;
  store: CronJobStore;
  scheduler: CronScheduler;
  stop(): Promise<void>;
};

/** A cron scheduler of one instance on the database: its own clock, its own fire, claims through the database. */
async function startServer(url: string, start = START): Promise<Server> {
  const database = await openDatabase({ url, logger, maxConnections: 3 });
  const instanceId = randomUUID();
  await database.sql`insert into instances (instance_id) values (${instanceId})`;
  const documents = await openPostgresStateDocuments({ database, logger });
  const store = await openCronJobStore({ documents });
  const clock = createFakeClock(start);
  const fire = createFakeFire(clock);
  const scheduler = await startCronScheduler({
    store,
    fire: fire.fire,
    logger,
    clock,
    defaultTimezone: 'UTC',
    claimSlot: (jobId, slot) => claimCronSlot({ database, instanceId, jobId, slot, deadAfterMs: 60_000 }),
  });
  return {
    clock,
    fire,
    store,
    scheduler,
    async stop() {
      await scheduler.close();
      await store.close();
      await documents.close();
      await database.close();
    },
  };
}

describe.skipIf(unavailable !== undefined)(
  `cron runs across servers on one database${unavailable === undefined ? '' : ` (skipped: ${unavailable})`}`,
  () => {
    it('fires each run of a job exactly once, whichever server’s timer comes first', async () => {
      await using created = await createTestDatabase();
      const servers = [await startServer(created.url), await startServer(created.url), await startServer(created.url)];
      try {
        const [first] = servers as [Server, ...Server[]];
        const job = await first.scheduler.add(
          { workerId: WORKER, prompt: 'Run the tests.', schedule: { every: '5m' } },
          { createdBy: { client: 'test' }, defaultTarget: { type: 'new' } },
        );
        for (const server of servers)
          await until(() => server.scheduler.get(job.jobId) !== undefined, 'the job everywhere');
        // Two runs' worth of time, every server's clock moving together.
        for (let minute = 1; minute <= 10; minute += 1) {
          for (const server of servers) server.clock.advance(MINUTE);
          const runs = minute >= 10 ? 2 : minute >= 5 ? 1 : 0;
          await until(
            () => servers.every((server) => (server.scheduler.get(job.jobId)?.runs ?? 0) >= runs),
            `${runs} run(s) recorded, seen by every server`,
          );
        }
        const calls = servers.flatMap((server) => server.fire.calls.map((call) => call.scheduledFor));
        expect(calls.sort()).toEqual(['2026-03-02T10:05:00.000Z', '2026-03-02T10:10:00.000Z']);
      } finally {
        for (const server of servers) await server.stop();
      }
    });

    it('runs a job due while every server was down once, when they come back together (missed: run_once)', async () => {
      await using created = await createTestDatabase();
      const before = await startServer(created.url);
      const job = await before.scheduler.add(
        { workerId: WORKER, prompt: 'Nightly.', schedule: { every: '1h' }, missed: 'run_once' },
        { createdBy: { client: 'test' }, defaultTarget: { type: 'new' } },
      );
      await before.stop();
      // Everyone was down for three hours: both come back at once.
      const later = '2026-03-02T13:30:00.000Z';
      const servers = await Promise.all([startServer(created.url, later), startServer(created.url, later)]);
      try {
        for (const server of servers) server.clock.advance(0);
        await until(
          () => servers.every((server) => server.scheduler.get(job.jobId)?.runs === 1),
          'the missed run recorded once, seen by both',
        );
        expect(servers.flatMap((server) => server.fire.calls)).toHaveLength(1);
      } finally {
        for (const server of servers) await server.stop();
      }
    });
  },
);

import { randomUUID } from 'node:crypto';
import { createSilentLogger } from '@molf/logging';
import type { WorkerId } from '@molf/protocol';
import { describe, expect, it } from 'vitest';
import { type CronJobStore, openCronJobStore } from '../cron/cron-job-store.ts';
import { type CronScheduler, startCronScheduler } from '../cron/cron-scheduler.ts';
import { type Database, openDatabase } from '../database/index.ts';
import { openPostgresStateDocuments } from '../state/index.ts';
import { createFakeClock, createFakeFire, type FakeClock, type FakeFire, until } from '../testing/cron-fakes.ts';
import { createTestDatabase, postgresUnavailable } from '../testing/test-database.ts';
import { cronSlotClaims } from './claim-cron-slot.ts';

const logger = createSilentLogger();
const unavailable = postgresUnavailable();
const MINUTE = 60_000;
const START = '2026-03-02T10:00:00.000Z';
const WORKER = randomUUID() as WorkerId;

type Server = {
  database: Database;
  /** The claims this server tried. */
  claims: string[];
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
  const claims: string[] = [];
  const slots = cronSlotClaims({ database, instanceId, deadAfterMs: 60_000 });
  const scheduler = await startCronScheduler({
    store,
    fire: fire.fire,
    logger,
    clock,
    defaultTimezone: 'UTC',
    claimSlot: (jobId, slot) => {
      claims.push(slot);
      return slots.claimSlot(jobId, slot);
    },
    slotFired: slots.slotFired,
  });
  return {
    database,
    claims,
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

/** The first run of a job added at START to run every hour. */
const FIRST_HOURLY_SLOT = '2026-03-02T11:00:00.000Z';

function addHourlyJob(server: Server) {
  return server.scheduler.add(
    { workerId: WORKER, prompt: 'Run the tests.', schedule: { every: '1h' } },
    { createdBy: { client: 'test' }, defaultTarget: { type: 'new' } },
  );
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

    it('fires a run whose claimer died before firing it, once the wait for that server ends, and marks it fired', async () => {
      await using created = await createTestDatabase();
      const server = await startServer(created.url);
      try {
        const job = await addHourlyJob(server);
        const slot = FIRST_HOURLY_SLOT;
        // Another server, alive a moment ago, claimed the run; then it died without firing it.
        await server.database.sql`insert into instances (instance_id) values ('the-dead-one')`;
        await server.database.sql`
          insert into cron_claims (job_id, slot, instance_id) values (${job.jobId}, ${slot}, 'the-dead-one')`;
        server.clock.advance(60 * MINUTE);
        await until(() => server.claims.length === 1, 'the run left to the server that claimed it');
        await server.database
          .sql`update instances set seen_at = now() - interval '1 hour' where instance_id = 'the-dead-one'`;
        // Nothing else is due: only the end of the wait for the claimer wakes this server.
        await until(() => {
          server.clock.advance(MINUTE);
          return server.fire.calls.length === 1;
        }, 'the run fired here');
        await until(() => server.scheduler.get(job.jobId)?.runs === 1, 'the run recorded');
        expect(server.fire.calls.map((call) => call.scheduledFor)).toEqual([slot]);
        const [claim] = await server.database.sql<{ fired: string | null }[]>`
          select fired from cron_claims where job_id = ${job.jobId} and slot = ${slot}`;
        expect(JSON.parse(claim?.fired ?? 'null')).toMatchObject({ outcome: 'started' });
      } finally {
        await server.stop();
      }
    });

    it('records, without firing it again, a run its claimer fired before it died', async () => {
      await using created = await createTestDatabase();
      const server = await startServer(created.url);
      try {
        const job = await addHourlyJob(server);
        const slot = FIRST_HOURLY_SLOT;
        const fired = { outcome: 'started', sessionId: 'ses_elsewhere', messageId: 'msg_elsewhere' };
        // The claimer stored the run's prompt, said so, and died before recording the run on the job.
        await server.database.sql`
          insert into instances (instance_id, seen_at) values ('the-dead-one', now() - interval '1 hour')`;
        await server.database.sql`
          insert into cron_claims (job_id, slot, instance_id, fired)
          values (${job.jobId}, ${slot}, 'the-dead-one', ${JSON.stringify(fired)})`;
        server.clock.advance(60 * MINUTE);
        await until(() => server.scheduler.get(job.jobId)?.runs === 1, 'the run recorded');
        expect(server.fire.calls).toEqual([]);
        expect(server.scheduler.get(job.jobId)?.lastRun).toMatchObject({ sessionId: 'ses_elsewhere' });
      } finally {
        await server.stop();
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

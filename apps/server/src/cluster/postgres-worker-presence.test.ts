import { randomUUID } from 'node:crypto';
import { createSilentLogger } from '@molf/logging';
import type { WorkerRegistration } from '@molf/protocol';
import { startPostgresCluster } from '@molf/testkit';
import { describe, expect, it } from 'vitest';
import { type Database, openDatabase } from '../database/index.ts';
import { postgresUnavailable } from '../testing/test-database.ts';
import { waitFor } from '../testing/test-link.ts';
import { openPostgresSessionLeases } from './postgres-session-leases.ts';
import { openPostgresWorkerPresence } from './postgres-worker-presence.ts';
import type { WorkerPresence } from './worker-presence.ts';

const logger = createSilentLogger();
const unavailable = postgresUnavailable();
const LIVE_MS = 10_000;

const newRegistration = (): WorkerRegistration => ({
  workerId: randomUUID() as WorkerRegistration['workerId'],
  instanceId: randomUUID(),
  name: 'w',
  workdir: '/w',
  tools: [],
  version: '0',
});

/** An instance's presence over its own pool, live through its leases (which renew it). */
async function instanceOn(url: string) {
  const database: Database = await openDatabase({ url, logger, maxConnections: 3 });
  const leases = await openPostgresSessionLeases({ database, logger, timings: { leaseMs: LIVE_MS, renewMs: 500 } });
  const presence: WorkerPresence = await openPostgresWorkerPresence({
    database,
    instanceId: leases.instanceId,
    liveMs: LIVE_MS,
    logger,
  });
  return {
    instanceId: leases.instanceId,
    presence,
    async close() {
      await presence.close().catch(() => undefined);
      await leases.close().catch(() => undefined);
      await database.close();
    },
  };
}

type Instance = Awaited<ReturnType<typeof instanceOn>>;

/** Waits until `watcher` reads the worker at `instance` (undefined: at none). */
function seenAt(watcher: Instance, workerId: string, instance: Instance | undefined, what: string) {
  return waitFor(async () => (await watcher.presence.instanceOf(workerId)) === instance?.instanceId, {
    what,
    timeoutMs: 60_000,
  });
}

/** A worker connected to `instance`, once `watcher` sees it there. */
async function connectedTo(instance: Instance, watcher: Instance): Promise<WorkerRegistration> {
  const worker = newRegistration();
  await instance.presence.update(worker.workerId, worker);
  await seenAt(watcher, worker.workerId, instance, 'the worker seen on the first instance');
  return worker;
}

describe.skipIf(unavailable !== undefined)(
  `worker presence in PostgreSQL${unavailable === undefined ? '' : ` (skipped: ${unavailable})`}`,
  () => {
    it('stores where a worker is once the database answers again, when it moved while the database was down', async () => {
      await using cluster = await startPostgresCluster();
      const url = await cluster.createDatabase('molf');
      const one = await instanceOn(url);
      const two = await instanceOn(url);
      const watcher = await instanceOn(url);
      try {
        const worker = await connectedTo(one, watcher);

        // While the database is down, the worker leaves the first instance and connects to the second.
        await cluster.stop();
        await expect(one.presence.update(worker.workerId, undefined)).rejects.toThrow();
        await expect(two.presence.update(worker.workerId, worker)).rejects.toThrow();
        await cluster.start();

        await seenAt(watcher, worker.workerId, two, 'the worker seen on the second instance');
        await waitFor(() => watcher.presence.elsewhere(worker.workerId) !== undefined, {
          what: 'the registration known elsewhere',
          timeoutMs: 60_000,
        });
      } finally {
        for (const instance of [one, two, watcher]) await instance.close();
      }
    });

    it('forgets a worker that left while the database was down, once it answers again', async () => {
      await using cluster = await startPostgresCluster();
      const url = await cluster.createDatabase('molf');
      const one = await instanceOn(url);
      const watcher = await instanceOn(url);
      try {
        const worker = await connectedTo(one, watcher);
        await cluster.stop();
        await expect(one.presence.update(worker.workerId, undefined)).rejects.toThrow();
        await cluster.start();
        await seenAt(watcher, worker.workerId, undefined, 'the worker gone');
        await waitFor(() => watcher.presence.elsewhere(worker.workerId) === undefined, {
          what: 'the registration forgotten elsewhere',
          timeoutMs: 60_000,
        });
      } finally {
        for (const instance of [one, watcher]) await instance.close();
      }
    });
  },
);

import type { Logger } from '@molf/logging';
import { type WorkerRegistration, WorkerRegistrationSchema } from '@molf/protocol';
import type { Database } from '../database/index.ts';
import { createTurnsByKey } from '../turns-by-key.ts';
import type { WorkerPresence } from './worker-presence.ts';

/** The channel that tells the other instances a worker connected, changed or left; the payload is its id. */
export const PRESENCE_CHANNEL = 'molf_worker_presence';

/** How often the workers of the other instances are looked at again, besides each announcement. */
const REFRESH_MS = 3_000;

type Seen = { instanceId: string; version: string; registration: WorkerRegistration };

/**
 * Worker presence as rows of `worker_connections`, one per connected worker, written by the instance
 * that holds its socket. An instance counts as live while it renewed its row of `instances` within
 * `liveMs` (the session leases renew it): the workers of a dead instance are nowhere until they
 * connect again. The others' workers are kept in memory, refreshed on each announcement and every
 * few seconds, reading a registration only when its version changed.
 */
export async function openPostgresWorkerPresence(options: {
  database: Database;
  instanceId: string;
  liveMs: number;
  logger: Logger;
}): Promise<WorkerPresence> {
  const { sql } = options.database;
  const { instanceId, logger } = options;
  const live = `${options.liveMs} milliseconds`;
  let seen = new Map<string, Seen>();
  let closed = false;
  const inOrder = createTurnsByKey();

  let refreshing: Promise<void> | undefined;
  let again = false;
  /** Looks again; a call while one runs makes it run once more after, not twice at once. */
  function refresh(): Promise<void> {
    if (refreshing !== undefined) {
      again = true;
      return refreshing;
    }
    refreshing = look()
      .catch((error: unknown) => logger.warn({ err: error }, 'cannot look at the workers of the other servers'))
      .finally(() => {
        refreshing = undefined;
        if (again && !closed) {
          again = false;
          void refresh();
        }
      });
    return refreshing;
  }

  async function look(): Promise<void> {
    const rows = await sql<{ worker_id: string; instance_id: string; version: string }[]>`
      select c.worker_id, c.instance_id, c.version from worker_connections c
      join instances i on i.instance_id = c.instance_id
      where c.instance_id <> ${instanceId} and i.seen_at > now() - ${live}::interval`;
    const changed = rows.filter((row) => {
      const known = seen.get(row.worker_id);
      return known?.instanceId !== row.instance_id || known.version !== row.version;
    });
    const read =
      changed.length === 0
        ? []
        : await sql<{ worker_id: string; instance_id: string; version: string; registration: string }[]>`
            select worker_id, instance_id, version, registration from worker_connections
            where worker_id = any(${changed.map((row) => row.worker_id)}::text[])`;
    const next = new Map<string, Seen>();
    for (const row of rows) {
      const known = seen.get(row.worker_id);
      if (known?.instanceId === row.instance_id && known.version === row.version) next.set(row.worker_id, known);
    }
    for (const row of read) {
      if (row.instance_id === instanceId) continue;
      const parsed = WorkerRegistrationSchema.safeParse(JSON.parse(row.registration));
      if (!parsed.success) {
        logger.warn({ workerId: row.worker_id }, 'skipping an unreadable worker registration of another server');
        continue;
      }
      next.set(row.worker_id, { instanceId: row.instance_id, version: row.version, registration: parsed.data });
    }
    seen = next;
  }

  /**
   * The change of each worker whose last write failed (the database was away): written again on each
   * look until it is, so that a worker that moved or left meanwhile is not left at the instance it
   * left. A newer change of the worker replaces it.
   */
  const unsaved = new Map<string, WorkerRegistration | undefined>();

  function update(workerId: string, registration: WorkerRegistration | undefined): Promise<void> {
    unsaved.set(workerId, registration);
    return inOrder(workerId, async () => {
      // A newer change came while this one waited: that one is written in its turn.
      if (!unsaved.has(workerId) || unsaved.get(workerId) !== registration) return;
      await write(workerId, registration);
      if (unsaved.get(workerId) === registration) unsaved.delete(workerId);
    });
  }

  let saving: Promise<unknown> | undefined;
  /** Writes the changes that failed again (one round at a time; a failure waits for the next round). */
  function saveUnsaved(): void {
    if (saving !== undefined || unsaved.size === 0) return;
    saving = Promise.allSettled([...unsaved].map(([workerId, registration]) => update(workerId, registration))).finally(
      () => {
        saving = undefined;
      },
    );
  }

  async function write(workerId: string, registration: WorkerRegistration | undefined): Promise<void> {
    if (registration !== undefined) {
      await sql`
        insert into worker_connections (worker_id, instance_id, registration)
        values (${workerId}, ${instanceId}, ${JSON.stringify(registration)})
        on conflict (worker_id) do update set instance_id = excluded.instance_id,
          registration = excluded.registration, version = worker_connections.version + 1, connected_at = now()`;
    } else {
      const gone = await sql`
        delete from worker_connections where worker_id = ${workerId} and instance_id = ${instanceId} returning 1`;
      if (gone.length === 0) return;
    }
    seen.delete(workerId);
    await sql`select pg_notify(${PRESENCE_CHANNEL}, ${workerId})`;
  }

  await look();
  const timer = setInterval(() => {
    if (closed) return;
    saveUnsaved();
    void refresh();
  }, REFRESH_MS);
  timer.unref();
  const listening = await sql.listen(PRESENCE_CHANNEL, () => {
    if (!closed) void refresh();
  });

  return {
    update,

    elsewhere: (workerId) => seen.get(workerId)?.registration,

    async instanceOf(workerId) {
      const [row] = await sql<{ instance_id: string }[]>`
        select c.instance_id from worker_connections c
        join instances i on i.instance_id = c.instance_id
        where c.worker_id = ${workerId} and i.seen_at > now() - ${live}::interval`;
      return row?.instance_id;
    },

    async close() {
      closed = true;
      clearInterval(timer);
      await listening.unlisten().catch(() => undefined);
      await refreshing;
      await sql`delete from worker_connections where instance_id = ${instanceId}`.catch(() => undefined);
    },
  };
}

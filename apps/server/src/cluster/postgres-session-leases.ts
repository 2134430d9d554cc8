import { randomUUID } from 'node:crypto';
import type { Logger } from '@molf/logging';
import type { Database } from '../database/index.ts';
import type { LeaseLoss, SessionLeases } from './session-leases.ts';

/**
 * The channel that wakes the instance running a session: the payload is `sessionId` (whoever holds
 * it), or `sessionId instanceId workerId` (that instance alone is asked to take it, for the worker
 * it holds).
 */
export const WAKE_CHANNEL = 'molf_session_wake';

/** The channel that asks the instance running a session to abort its turn; the payload is the session id. */
export const ABORT_CHANNEL = 'molf_session_abort';

export type LeaseTimings = {
  /** How long a lease lasts past its last renewal, on the database's clock. Default 10 s. */
  leaseMs?: number;
  /** How often held leases are renewed. Default 3 s. */
  renewMs?: number;
};

export const DEFAULT_LEASE_MS = 10_000;
const DEFAULT_RENEW_MS = 3_000;

/**
 * Session leases as rows of `session_leases`, timed by the database's clock (instances' clocks may
 * disagree): claimed with one conditional upsert, renewed together every few seconds, given back when
 * the session goes idle. An instance that cannot renew for longer than a lease lasts (it lost the
 * database, or was frozen) drops its leases itself before anyone else can take them, so that two
 * instances never run one session.
 */
export async function openPostgresSessionLeases(options: {
  database: Database;
  logger: Logger;
  timings?: LeaseTimings;
}): Promise<SessionLeases> {
  const { sql } = options.database;
  const { logger } = options;
  const leaseMs = options.timings?.leaseMs ?? DEFAULT_LEASE_MS;
  const renewMs = options.timings?.renewMs ?? DEFAULT_RENEW_MS;
  const instanceId = randomUUID();
  /** The sessions held, each with the number of its claim (a renewal sent before a claim cannot lose it). */
  const held = new Map<string, number>();
  let claims = 0;
  const lostListeners = new Set<(sessionId: string, how: LeaseLoss) => void>();
  const wakeListeners = new Set<(sessionId: string, workerId: string | undefined) => void>();
  /** When the last renewal that reached the database was sent (this process's monotonic clock). */
  let renewedAt = performance.now();
  let closed = false;

  await sql`insert into instances (instance_id) values (${instanceId})`;

  function lose(sessionId: string, how: LeaseLoss): void {
    if (!held.delete(sessionId)) return;
    logger.warn({ sessionId, instanceId, how }, 'lost the lease of a session: its turn stops here');
    for (const listener of lostListeners) listener(sessionId, how);
  }

  let renewing = false;
  async function renew(): Promise<void> {
    if (renewing) return;
    renewing = true;
    const sentAt = performance.now();
    const sessions = [...held];
    const ids = sessions.map(([sessionId]) => sessionId);
    try {
      // Only a lease still running is renewed: one that expired while this renewal was on its way
      // (a stalled link) may be another instance's turn by now, and stays expired.
      const rows = await sql<{ session_id: string }[]>`
        with seen as (update instances set seen_at = now() where instance_id = ${instanceId})
        update session_leases set expires_at = now() + ${`${leaseMs} milliseconds`}::interval
        where instance_id = ${instanceId} and session_id = any(${ids}::text[]) and expires_at > now()
        returning session_id`;
      renewedAt = sentAt;
      const renewed = new Set(rows.map((row) => row.session_id));
      // A lease let go and claimed again while the renewal was on its way is the new claim's.
      for (const [sessionId, claim] of sessions) {
        if (!renewed.has(sessionId) && held.get(sessionId) === claim) lose(sessionId, 'taken');
      }
    } catch (error) {
      logger.warn({ err: error, instanceId }, 'cannot renew the session leases');
    } finally {
      renewing = false;
    }
  }

  const renewal = setInterval(() => {
    if (!closed) void renew();
  }, renewMs);
  renewal.unref();
  // A renewal may hang (a partition): this watch does not wait for it. Past `leaseMs - renewMs`
  // since the last renewal that went through, the database may expire the leases any moment, and
  // another instance take them: they are dropped here first.
  const watchdog = setInterval(
    () => {
      if (held.size > 0 && performance.now() - renewedAt > leaseMs - renewMs) {
        for (const sessionId of [...held.keys()]) lose(sessionId, 'unrenewed');
      }
    },
    Math.min(500, renewMs),
  );
  watchdog.unref();

  const abortListeners = new Set<(sessionId: string) => void>();
  const abortListening = await sql.listen(ABORT_CHANNEL, (sessionId) => {
    if (!held.has(sessionId)) return;
    for (const listener of abortListeners) listener(sessionId);
  });
  const listening = await sql.listen(WAKE_CHANNEL, (payload) => {
    const [sessionId, target, workerId] = payload.split(' ');
    if (sessionId === undefined || (target !== undefined && target !== instanceId)) return;
    for (const listener of wakeListeners) listener(sessionId, workerId);
  });

  return {
    instanceId,

    async claim(sessionId) {
      if (closed) return false;
      const rows = await sql<{ instance_id: string }[]>`
        insert into session_leases (session_id, instance_id, expires_at)
        values (${sessionId}, ${instanceId}, now() + ${`${leaseMs} milliseconds`}::interval)
        on conflict (session_id) do update
          set instance_id = excluded.instance_id, expires_at = excluded.expires_at
          where session_leases.expires_at < now() or session_leases.instance_id = excluded.instance_id
        returning instance_id`;
      const claimed = rows.length > 0;
      if (claimed) {
        // A lease taken while renewals fail would be dropped at once by the watch: count from now.
        if (held.size === 0) renewedAt = performance.now();
        claims += 1;
        held.set(sessionId, claims);
      }
      return claimed;
    },

    async holderOf(sessionId) {
      const [row] = await sql<{ instance_id: string }[]>`
        select instance_id from session_leases where session_id = ${sessionId} and expires_at > now()`;
      return row?.instance_id;
    },

    holds: (sessionId) => held.has(sessionId),

    async release(sessionId) {
      held.delete(sessionId);
      // One statement: its snapshot is taken after any prompt whose wake came while the lease was
      // held, and a prompt queued after it finds the lease free (a claim waits for the delete).
      const [row] = await sql<{ waiting: boolean }[]>`
        with released as (
          delete from session_leases where session_id = ${sessionId} and instance_id = ${instanceId}
        )
        select exists (select 1 from session_queue where session_id = ${sessionId}) as waiting`;
      return { waiting: row?.waiting === true };
    },

    async wake(sessionId, target) {
      const payload =
        target === undefined
          ? sessionId
          : `${sessionId} ${target.instanceId}${target.workerId === undefined ? '' : ` ${target.workerId}`}`;
      await sql`select pg_notify(${WAKE_CHANNEL}, ${payload})`;
    },

    async requestAbort(sessionId) {
      await sql`select pg_notify(${ABORT_CHANNEL}, ${sessionId})`;
    },

    onAbortRequested(listener) {
      abortListeners.add(listener);
      return () => {
        abortListeners.delete(listener);
      };
    },

    onWake(listener) {
      wakeListeners.add(listener);
      return () => {
        wakeListeners.delete(listener);
      };
    },

    onLost(listener) {
      lostListeners.add(listener);
      return () => {
        lostListeners.delete(listener);
      };
    },

    async unclaimed() {
      const rows = await sql<{ session_id: string }[]>`
        select s.session_id from sessions s
        where s.parent_session_id is null
          and (s.status = 'busy' or exists (select 1 from session_queue q where q.session_id = s.session_id))
          and not exists (
            select 1 from session_leases l where l.session_id = s.session_id and l.expires_at > now()
          )
        limit 100`;
      return rows.map((row) => row.session_id);
    },

    async close() {
      closed = true;
      clearInterval(renewal);
      clearInterval(watchdog);
      wakeListeners.clear();
      abortListeners.clear();
      await listening.unlisten().catch(() => undefined);
      await abortListening.unlisten().catch(() => undefined);
      const sessions = [...held];
      held.clear();
      await sql`delete from session_leases where instance_id = ${instanceId}`.catch((error: unknown) =>
        logger.warn({ err: error, sessions: sessions.length }, 'cannot give back the session leases'),
      );
      await sql`delete from instances where instance_id = ${instanceId}`.catch(() => undefined);
    },
  };
}

import type { Logger } from '@molf/logging';
import type { SessionEvent } from '@molf/protocol';
import type { Database } from '../database/index.ts';
import { MAX_KEPT_EVENTS } from './session-events.ts';
import type { StoredEventLog } from './stored-event-log.ts';

/**
 * The channel every instance listens on. A payload is the stored events themselves, a JSON array,
 * when they fit (see CARRIED_BYTES); otherwise each session's newest number, `sessionId:seq` pairs,
 * comma-separated, and the listeners read the events from the table.
 */
export const EVENTS_CHANNEL = 'molf_session_events';

/**
 * The most bytes of events an announcement carries: PostgreSQL refuses payloads of 8,000 bytes or
 * more. A tick's events of a few sessions fit (deltas, statuses), so the instances that follow them
 * show them without a query; a busy tick's batch, or a large tool result, is announced by number.
 */
export const CARRIED_BYTES = 7_500;

/**
 * How many events of a session are kept: as many as a server keeps in memory. Older ones are
 * deleted each time a session's numbers pass a multiple of `TRIM_EVERY`, so a session keeps
 * between `kept` and `kept + TRIM_EVERY`; a subscriber behind that resyncs (reloads the messages).
 */
const TRIM_EVERY = 1_000;

/**
 * Session events in PostgreSQL (`session_events`, one row per event, keyed by session and number),
 * announced with `NOTIFY` in the statement that stores them: the announcement is the wake-up, the
 * table the truth. A batch is one statement whatever the number of sessions in it.
 *
 * A session's events in a batch are refused from the first that cannot be kept on, so that its
 * numbers have no hole (the writer numbers refused events again, or drops them):
 * - all of them unless the first follows the newest stored one: their instance counted from a
 *   stale head (another stored events meanwhile, or an earlier batch of its own was refused);
 * - from the first event of a turn that another turn followed (the session's newest `turn.started`,
 *   in the batch or stored, is another's, and this turn's start is stored): the late events of an
 *   instance that was cut off while another took the session over and started the turn again. A
 *   turn that never started (it failed first) is no such turn: its error and end are kept.
 */
export async function openPostgresEventLog(options: {
  database: Database;
  logger: Logger;
  /** Default `MAX_KEPT_EVENTS` (5,000). */
  kept?: number;
}): Promise<StoredEventLog> {
  const { sql } = options.database;
  const kept = options.kept ?? MAX_KEPT_EVENTS;

  /** Deletes the events of sessions whose numbers passed a multiple of TRIM_EVERY in this batch. */
  async function trim(events: readonly SessionEvent[]): Promise<void> {
    const newest = new Map<string, { low: number; high: number }>();
    for (const event of events) {
      const range = newest.get(event.sessionId) ?? { low: event.seq, high: event.seq };
      newest.set(event.sessionId, { low: Math.min(range.low, event.seq), high: Math.max(range.high, event.seq) });
    }
    for (const [sessionId, { low, high }] of newest) {
      if (Math.floor(high / TRIM_EVERY) === Math.floor((low - 1) / TRIM_EVERY) || high <= kept) continue;
      await sql`delete from session_events where session_id = ${sessionId} and seq <= ${high - kept}`;
    }
  }
  const [meta] = await sql<{ value: string }[]>`select value from molf_meta where key = 'event_epoch'`;
  const epoch = meta?.value ?? 'db';
  const parse = (body: string) => JSON.parse(body) as SessionEvent;
  const listeners = new Set<Parameters<StoredEventLog['onStored']>[0]>();
  let first = true;
  // Listening before the log is used: an event stored right after the open is announced here too.
  const listening = await sql.listen(
    EVENTS_CHANNEL,
    (payload) => {
      if (!payload.startsWith('[')) {
        for (const pair of payload.split(',')) {
          const at = pair.lastIndexOf(':');
          for (const listener of listeners) listener(pair.slice(0, at), Number(pair.slice(at + 1)));
        }
        return;
      }
      let carried: Map<string, SessionEvent[]>;
      try {
        carried = bySession(JSON.parse(payload));
      } catch (error) {
        // Not what this log writes: whatever it announced is read from the table.
        options.logger.warn({ err: error }, 'cannot read an announcement of stored events');
        for (const listener of listeners) listener(undefined, 0);
        return;
      }
      for (const [sessionId, events] of carried) {
        const newest = events.at(-1)?.seq ?? 0;
        for (const listener of listeners) listener(sessionId, newest, events);
      }
    },
    () => {
      // Called again after each reconnect: what was announced meanwhile was missed.
      if (!first) for (const listener of listeners) listener(undefined, 0);
      first = false;
    },
  );

  return {
    epoch,

    async head(sessionId) {
      const [row] = await sql<{ last_seq: string | null; turn_seq: string | null; turn_type: string | null }[]>`
        select
          (select max(seq) from session_events where session_id = ${sessionId}) as last_seq,
          turn.seq as turn_seq, turn.type as turn_type
        from (select 1) one
        left join lateral (
          select seq, type from session_events
          where session_id = ${sessionId} and type in ('turn.started', 'turn.ended')
          order by seq desc limit 1
        ) turn on true`;
      return {
        lastSeq: Number(row?.last_seq ?? 0),
        turnStartSeq: row?.turn_type === 'turn.started' ? Number(row.turn_seq) : undefined,
      };
    },

    async write(events) {
      if (events.length === 0) return [];
      // One statement: the rows, and their announcement, sent on commit: the rows themselves when
      // they fit, else each session's newest number. `refused_from`: each session's first refused number.
      const rows = await sql<{ session_id: string; seq: string }[]>`
        with incoming as (
          select * from unnest(
            ${events.map((event) => event.sessionId)}::text[],
            ${events.map((event) => event.seq)}::bigint[],
            ${events.map((event) => event.type)}::text[],
            ${events.map((event) => JSON.stringify(event))}::text[],
            ${events.map(turnOf)}::text[],
            ${turnsStartedInBatch(events)}::text[]
          ) as event(session_id, seq, type, body, turn_id, batch_turn)
        ), head as (
          select batch.session_id, batch.first_seq, last.seq as last_seq, running.turn_id as stored_turn
          from (select session_id, min(seq) as first_seq from incoming group by session_id) batch
          left join lateral (
            select seq from session_events where session_id = batch.session_id order by seq desc limit 1
          ) last on true
          left join lateral (
            select body::jsonb ->> 'turnId' as turn_id from session_events
            where session_id = batch.session_id and type = 'turn.started'
            order by seq desc limit 1
          ) running on true
        ), refused_from as (
          select head.session_id, case
            when head.first_seq <> head.last_seq + 1 then head.first_seq
            else (
              select min(incoming.seq) from incoming
              where incoming.session_id = head.session_id
                and incoming.turn_id <> coalesce(incoming.batch_turn, head.stored_turn)
                and (
                  incoming.batch_turn is not null
                  or exists (
                    select 1 from session_events started
                    where started.session_id = head.session_id and started.type = 'turn.started'
                      and started.body::jsonb ->> 'turnId' = incoming.turn_id
                  )
                )
            )
          end as seq
          from head
        ), stored as (
          insert into session_events (session_id, seq, type, body)
          select incoming.session_id, incoming.seq, incoming.type, incoming.body
          from incoming join refused_from using (session_id)
          where refused_from.seq is null or incoming.seq < refused_from.seq
          on conflict do nothing
          returning session_id, seq, body
        ), announced as (
          select pg_notify(${EVENTS_CHANNEL}, case
            when sum(octet_length(body) + 1) <= ${CARRIED_BYTES - 2}
              then '[' || string_agg(body, ',' order by session_id, seq) || ']'
            else (
              select string_agg(session_id || ':' || seq, ',')
              from (select session_id, max(seq) as seq from stored group by session_id) newest
            )
          end)
          from stored
        )
        select session_id, seq from stored, (select count(*) from announced) sent`;
      const stored = new Set(rows.map((row) => `${row.session_id}:${row.seq}`));
      const written = events.filter((event) => stored.has(`${event.sessionId}:${event.seq}`));
      await trim(written).catch((error: unknown) =>
        options.logger.warn({ err: error }, 'cannot delete the oldest session events'),
      );
      return written;
    },

    async read(sessionId, afterSeq, limit) {
      const rows = await sql<{ body: string }[]>`
        select body from session_events
        where session_id = ${sessionId} and seq > ${afterSeq}
        order by seq limit ${limit}`;
      return rows.map((row) => parse(row.body));
    },

    async readMany(requests, limit) {
      const pages = new Map<string, SessionEvent[]>();
      if (requests.length === 0) return pages;
      // Each session's newest rows through its own index lookup, all in one round trip.
      const rows = await sql<{ body: string }[]>`
        select page.body from unnest(
          ${requests.map((request) => request.sessionId)}::text[],
          ${requests.map((request) => request.afterSeq)}::bigint[]
        ) as wanted(session_id, after_seq)
        cross join lateral (
          select body, seq from session_events
          where session_id = wanted.session_id and seq > wanted.after_seq
          order by seq limit ${limit}
        ) page
        order by wanted.session_id, page.seq`;
      for (const row of rows) {
        const event = parse(row.body);
        const page = pages.get(event.sessionId);
        if (page === undefined) pages.set(event.sessionId, [event]);
        else page.push(event);
      }
      return pages;
    },

    onStored(listener) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },

    async forget(sessionId) {
      await sql`delete from session_events where session_id = ${sessionId}`;
    },

    async close() {
      listeners.clear();
      await listening.unlisten().catch(() => undefined);
    },
  };
}

/** The turn an event belongs to (null for events of no turn). */
function turnOf(event: SessionEvent): string | null {
  return 'turnId' in event && typeof event.turnId === 'string' ? event.turnId : null;
}

/**
 * For each event, the turn of its session's newest `turn.started` in the batch up to it (null when
 * none): the running turn the event is checked against, before the stored ones.
 */
function turnsStartedInBatch(events: readonly SessionEvent[]): Array<string | null> {
  const running = new Map<string, string>();
  return events.map((event) => {
    if (event.type === 'turn.started') running.set(event.sessionId, event.turnId);
    return running.get(event.sessionId) ?? null;
  });
}

/** Announced events grouped by session, each session's in the order given; throws on anything else. */
function bySession(announced: unknown): Map<string, SessionEvent[]> {
  if (!Array.isArray(announced)) throw new TypeError('an announcement of events is not a list');
  const sessions = new Map<string, SessionEvent[]>();
  for (const event of announced as SessionEvent[]) {
    if (typeof event?.sessionId !== 'string' || !Number.isInteger(event.seq)) {
      throw new TypeError('an announced event has no session or number');
    }
    const list = sessions.get(event.sessionId);
    if (list === undefined) sessions.set(event.sessionId, [event]);
    else list.push(event);
  }
  return sessions;
}

import type { Logger } from '@molf/logging';
import type { SessionEvent } from '@molf/protocol';
import type { Database } from '../database/index.ts';
import type { StoredEventLog } from './stored-event-log.ts';

/** The channel every instance listens on; a payload is `sessionId:seq` pairs, comma-separated. */
export const EVENTS_CHANNEL = 'molf_session_events';

/**
 * Session events in PostgreSQL (`session_events`, one row per event, keyed by session and number),
 * announced with `NOTIFY` in the statement that stores them: the announcement is the wake-up, the
 * table the truth. A batch is one statement whatever the number of sessions in it.
 */
export async function openPostgresEventLog(options: { database: Database; logger: Logger }): Promise<StoredEventLog> {
  const { sql } = options.database;
  const [meta] = await sql<{ value: string }[]>`select value from molf_meta where key = 'event_epoch'`;
  const epoch = meta?.value ?? 'db';
  const parse = (body: string) => JSON.parse(body) as SessionEvent;
  const listeners = new Set<(sessionId: string | undefined, seq: number) => void>();
  let first = true;
  // Listening before the log is used: an event stored right after the open is announced here too.
  const listening = await sql.listen(
    EVENTS_CHANNEL,
    (payload) => {
      for (const pair of payload.split(',')) {
        const at = pair.lastIndexOf(':');
        for (const listener of listeners) listener(pair.slice(0, at), Number(pair.slice(at + 1)));
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
      // One statement: the rows, and one announcement of each session's newest number, sent on commit.
      const rows = await sql<{ session_id: string; seq: string }[]>`
        with stored as (
          insert into session_events (session_id, seq, type, body)
          select * from unnest(
            ${events.map((event) => event.sessionId)}::text[],
            ${events.map((event) => event.seq)}::bigint[],
            ${events.map((event) => event.type)}::text[],
            ${events.map((event) => JSON.stringify(event))}::text[]
          )
          on conflict do nothing
          returning session_id, seq
        ), announced as (
          select pg_notify(${EVENTS_CHANNEL}, string_agg(session_id || ':' || seq, ','))
          from (select session_id, max(seq) as seq from stored group by session_id) newest
        )
        select session_id, seq from stored, (select count(*) from announced) sent`;
      const stored = new Set(rows.map((row) => `${row.session_id}:${row.seq}`));
      return events.filter((event) => stored.has(`${event.sessionId}:${event.seq}`));
    },

    async read(sessionId, afterSeq, limit) {
      const rows = await sql<{ body: string }[]>`
        select body from session_events
        where session_id = ${sessionId} and seq > ${afterSeq}
        order by seq limit ${limit}`;
      return rows.map((row) => parse(row.body));
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

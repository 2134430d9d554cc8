import { randomBytes } from 'node:crypto';
import type { SessionEvent, SessionEventBody } from '@molf/protocol';
import { type TrackedEnvelope, tracked } from '@trpc/server';
import { createEventRing, type EventRing } from './event-ring.ts';

export type SessionEvents = {
  /**
   * Publishes an event with the session's next sequence number. Text deltas of one turn published
   * in one tick become one event (published at the end of the tick, or before the session's next
   * other event): fewer frames for every subscriber, with order and sequence numbers exact.
   * Returns the published event; undefined for a delta, which is published later.
   */
  publish(sessionId: string, body: SessionEventBody): SessionEvent | undefined;
  /**
   * Every kept event after `lastEventId`, then live ones, as tracked envelopes (ids `epoch:seq`), with
   * no gap and no duplicate. An id from before a restart, or older than what is kept, starts with
   * `session.resync` and every kept event.
   */
  stream(options: {
    sessionId: string;
    lastEventId: string | null | undefined;
    /** Without a last event id: only events published from now on. */
    fromNow?: boolean | undefined;
    /**
     * Without a last event id: from the `turn.started` of the turn that runs now (from now when
     * none runs), so that a client that loaded the stored messages also sees the turn in progress.
     */
    fromTurnStart?: boolean | undefined;
    signal: AbortSignal | undefined;
  }): AsyncGenerator<TrackedEnvelope<SessionEvent>>;
  /**
   * Calls `observer` with each event of the session as it is published (deltas once coalesced), in
   * order, until the returned function is called. The observer must not throw.
   */
  observe(sessionId: string, observer: (event: SessionEvent) => void): () => void;
  /** Forgets a session's events (session deleted). */
  forget(sessionId: string): void;
  /** Stops the sweep of idle logs. */
  close(): void;
};

/** Events kept per session for subscribers that reconnect. */
export const MAX_KEPT_EVENTS = 5_000;

type Log = {
  nextSeq: number;
  events: EventRing;
  listeners: Set<() => void>;
  observers: Set<(event: SessionEvent) => void>;
  lastAt: number;
  /** Text deltas waiting for the end of the tick. */
  pending: { turnId: string; texts: string[] } | undefined;
  /** The sequence number of the running turn's `turn.started`; undefined between turns. */
  turnStartSeq: number | undefined;
};

/**
 * A session nobody follows and nothing happened in for this long gives its kept events back (its
 * sequence numbers go on): a later subscriber with an old id gets `session.resync`.
 */
export const IDLE_LOG_MS = 10 * 60_000;

export function createSessionEvents(options: { idleLogMs?: number } = {}): SessionEvents {
  const idleLogMs = options.idleLogMs ?? IDLE_LOG_MS;
  /** Ids carry the server's epoch: after a restart, old ids must not skip new events. */
  const epoch = randomBytes(4).toString('hex');
  const logs = new Map<string, Log>();

  function logOf(sessionId: string): Log {
    let log = logs.get(sessionId);
    if (log === undefined) {
      log = {
        nextSeq: 1,
        events: createEventRing(MAX_KEPT_EVENTS),
        listeners: new Set(),
        observers: new Set(),
        lastAt: Date.now(),
        pending: undefined,
        turnStartSeq: undefined,
      };
      logs.set(sessionId, log);
    }
    return log;
  }

  function append(sessionId: string, log: Log, body: SessionEventBody): SessionEvent {
    const event = { ...body, seq: log.nextSeq, sessionId, at: new Date().toISOString() } as SessionEvent;
    log.nextSeq += 1;
    log.lastAt = Date.now();
    if (body.type === 'turn.started') log.turnStartSeq = event.seq;
    else if (body.type === 'turn.ended') log.turnStartSeq = undefined;
    log.events.push(event);
    for (const listener of log.listeners) listener();
    for (const observer of log.observers) observer(event);
    return event;
  }

  /** Sessions with deltas waiting, flushed together once per tick. */
  const waiting = new Map<string, Log>();
  let flushScheduled = false;

  function flushDeltas(sessionId: string, log: Log): void {
    const { pending } = log;
    if (pending === undefined) return;
    log.pending = undefined;
    waiting.delete(sessionId);
    append(sessionId, log, { type: 'message.delta', turnId: pending.turnId, text: pending.texts.join('') });
  }

  function flushAll(): void {
    flushScheduled = false;
    for (const [sessionId, log] of waiting) flushDeltas(sessionId, log);
  }

  const idOf = (event: SessionEvent) => `${epoch}:${event.seq}`;
  /** Tells a subscriber that events it should have seen are gone: reload, then follow on. */
  const resyncOf = (sessionId: string) =>
    tracked(`${epoch}:0`, { type: 'session.resync', seq: 0, sessionId, at: new Date().toISOString() } as SessionEvent);
  const sweep = setInterval(
    () => {
      const now = Date.now();
      for (const log of logs.values()) {
        if (log.listeners.size === 0 && log.events.size() > 0 && now - log.lastAt > idleLogMs) log.events.clear();
      }
    },
    Math.min(60_000, idleLogMs),
  );
  sweep.unref();

  return {
    publish(sessionId, body) {
      const log = logOf(sessionId);
      if (body.type === 'message.delta') {
        if (log.pending?.turnId === body.turnId) {
          log.pending.texts.push(body.text);
          return undefined;
        }
        flushDeltas(sessionId, log);
        log.pending = { turnId: body.turnId, texts: [body.text] };
        waiting.set(sessionId, log);
        if (!flushScheduled) {
          flushScheduled = true;
          setImmediate(flushAll);
        }
        return undefined;
      }
      flushDeltas(sessionId, log);
      return append(sessionId, log, body);
    },

    async *stream({ sessionId, lastEventId, fromNow, fromTurnStart, signal }) {
      const log = logOf(sessionId);
      let wake: (() => void) | undefined;
      const listener = () => wake?.();
      log.listeners.add(listener);
      const onAbort = () => wake?.();
      signal?.addEventListener('abort', onAbort);
      try {
        let after = 0;
        const [idEpoch, idSeq] = (lastEventId ?? '').split(':');
        const seq = Number(idSeq);
        const firstKept = log.events.firstSeq(log.nextSeq);
        if (lastEventId === null || lastEventId === undefined) {
          if (fromTurnStart === true) {
            // A turn whose start is no longer kept is followed from the oldest kept event, after a resync.
            after = Math.max(log.turnStartSeq ?? log.nextSeq, firstKept) - 1;
            if (log.turnStartSeq !== undefined && log.turnStartSeq < firstKept) {
              yield resyncOf(sessionId);
            }
          } else if (fromNow === true) {
            after = log.nextSeq - 1;
          }
        }
        if (lastEventId !== null && lastEventId !== undefined) {
          if (idEpoch === epoch && Number.isInteger(seq) && seq >= firstKept - 1) {
            after = seq;
          } else {
            yield resyncOf(sessionId);
            after = firstKept - 1;
          }
        }
        while (signal?.aborted !== true && logs.get(sessionId) === log) {
          // Sequence numbers are contiguous, so the next event's place is known.
          const first = log.events.firstSeq(log.nextSeq);
          if (after + 1 < first) {
            // This subscriber fell behind what is kept: say so, rather than skip silently.
            yield resyncOf(sessionId);
            after = first - 1;
            continue;
          }
          const next = log.events.at(after + 1);
          if (next === undefined) {
            await new Promise<void>((resolvePromise) => {
              wake = resolvePromise;
            });
            wake = undefined;
            continue;
          }
          after = next.seq;
          yield tracked(idOf(next), next);
        }
      } finally {
        signal?.removeEventListener('abort', onAbort);
        log.listeners.delete(listener);
      }
    },

    observe(sessionId, observer) {
      const log = logOf(sessionId);
      log.observers.add(observer);
      return () => {
        log.observers.delete(observer);
      };
    },

    forget(sessionId) {
      const log = logs.get(sessionId);
      logs.delete(sessionId);
      waiting.delete(sessionId);
      // Streams still open on a deleted session end.
      for (const listener of log?.listeners ?? []) listener();
    },

    close() {
      clearInterval(sweep);
    },
  };
}

import { randomBytes } from 'node:crypto';
import type { Logger } from '@molf/logging';
import type { SessionEvent, SessionEventBody } from '@molf/protocol';
import { type TrackedEnvelope, tracked } from '@trpc/server';
import { createEventRing, type EventRing } from './event-ring.ts';
import { createEventWriter, type EventWriter } from './event-writer.ts';
import type { StoredEventLog } from './stored-event-log.ts';

export type SessionEvents = {
  /**
   * Publishes an event with the session's next sequence number. Text deltas of one turn published
   * in one tick become one event (published at the end of the tick, or before the session's next
   * other event): fewer frames for every subscriber, with order and sequence numbers exact.
   * Returns the published event; undefined for a delta, which is published later, and, with a
   * stored log, for an event of a session whose last number is still being read.
   *
   * With a stored log, an event whose number another instance stored first is numbered again after
   * the stored ones if this instance runs the session (see `runs`), or if it is `standalone`, an event
   * of no turn (a rename made through any server); otherwise (a turn cut off elsewhere) it is refused.
   */
  publish(sessionId: string, body: SessionEventBody, options?: { standalone?: boolean }): SessionEvent | undefined;
  /**
   * Every kept event after `lastEventId`, then live ones, as tracked envelopes (ids `epoch:seq`), with
   * no gap and no duplicate. An id from another epoch (a restart of a server that keeps events in
   * memory), or older than what is kept, starts with `session.resync` and every kept event. With a
   * stored log, subscribers see an event once it is stored, and every stored one is kept.
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
   * Calls `observer` with each event of the session as this process publishes it (deltas once
   * coalesced), in order, until the returned function is called: before it is stored, so that the
   * code running a turn sees its own events at once. The observer must not throw.
   */
  observe(sessionId: string, observer: (event: SessionEvent) => void): () => void;
  /**
   * The turn whose `turn.started` is the session's newest turn event, stored and not ended: a turn
   * whose server stopped before its end. Undefined without a stored log (one process: its turns end).
   */
  openTurn(sessionId: string): Promise<string | undefined>;
  /** Forgets a session's events (session deleted); a stored log deletes them. */
  forget(sessionId: string): void;
  /** Stops the sweep of idle logs; with a stored log, waits for the events being written. */
  close(): Promise<void>;
};

/** Events kept per session for subscribers that reconnect. */
export const MAX_KEPT_EVENTS = 5_000;
/** Events read from a stored log at a time, for a subscriber that resumes from far back. */
const READ_PAGE = 500;
/**
 * How often an event is numbered again after the stored log refused it: a number taken by another
 * instance takes one or two rounds; more means the log refuses the event itself.
 */
const MAX_REFUSALS = 8;
/** Events read per session when many sessions are read in one query (a full page reads on alone). */
const MANY_PAGE = 50;

type Log = {
  sessionId: string;
  /** The number the next event this process publishes gets. */
  nextSeq: number;
  /** The number of the newest event subscribers were given (stored, with a stored log). */
  shownSeq: number;
  events: EventRing;
  listeners: Set<() => void>;
  observers: Set<(event: SessionEvent) => void>;
  lastAt: number;
  /** Text deltas waiting for the end of the tick. */
  pending: { turnId: string; texts: string[] } | undefined;
  /** The sequence number of the shown running turn's `turn.started`; undefined between turns. */
  turnStartSeq: number | undefined;
  /** With a stored log: whether the session's last number was read (publishing waits for it). */
  loaded: boolean;
  loading: Promise<void> | undefined;
  /** Bodies published while the last number was being read, in order. */
  waiting: SessionEventBody[];
  /** With a stored log: the reading of events stored by another instance, while it runs. */
  catchingUp: Promise<void> | undefined;
  /** More was stored while the reading ran. */
  readAgain: boolean;
  /** The highest number announced as stored by any instance. */
  announcedSeq: number;
  /** Events handed to the writer and not yet stored. */
  unwritten: number;
};

/**
 * A session's IDLE log nobody follows and nothing happened in for this long gives its kept events
 * back (its sequence numbers go on); with a stored log it is dropped whole, and read again when needed.
 */
export const IDLE_LOG_MS = 10 * 60_000;

export type SessionEventsOptions = {
  idleLogMs?: number;
  /**
   * Where events are stored, numbered, and shared with the other instances (PostgreSQL). Default:
   * none — events live in this process's memory, and a restart starts a new epoch.
   */
  storage?: StoredEventLog;
  /** Where a failed write is told. Default: nowhere. */
  logger?: Logger;
  /**
   * With a stored log: whether this instance runs the session (it holds its lease). Its events
   * refused because another instance took their number (a rename made elsewhere) are numbered
   * again; the events of an instance that no longer runs the session stay refused. Default: never.
   */
  runs?: (sessionId: string) => boolean;
};

export function createSessionEvents(options: SessionEventsOptions = {}): SessionEvents {
  const idleLogMs = options.idleLogMs ?? IDLE_LOG_MS;
  const { storage } = options;
  /** Ids carry the epoch: after a restart of a server that keeps events in memory, old ids must not skip new events. */
  const epoch = storage?.epoch ?? randomBytes(4).toString('hex');
  const logs = new Map<string, Log>();

  function logOf(sessionId: string): Log {
    let log = logs.get(sessionId);
    if (log === undefined) {
      log = {
        sessionId,
        nextSeq: 1,
        shownSeq: 0,
        events: createEventRing(MAX_KEPT_EVENTS),
        listeners: new Set(),
        observers: new Set(),
        lastAt: Date.now(),
        pending: undefined,
        turnStartSeq: undefined,
        loaded: storage === undefined,
        loading: undefined,
        waiting: [],
        catchingUp: undefined,
        readAgain: false,
        announcedSeq: 0,
        unwritten: 0,
      };
      logs.set(sessionId, log);
    }
    return log;
  }

  /** Reads where a stored session's events stand; publishing and streaming wait for it. */
  function load(log: Log): Promise<void> {
    if (log.loaded || storage === undefined) return Promise.resolve();
    log.loading ??= storage.head(log.sessionId).then(
      (head) => {
        log.loading = undefined;
        if (logs.get(log.sessionId) !== log) return;
        log.loaded = true;
        // After a refusal too: events numbered past the stored head since were refused with it (a
        // batch must follow the stored events), and are numbered again from here.
        log.nextSeq = head.lastSeq + 1;
        if (log.shownSeq === 0 && log.events.size() === 0) {
          // A log new to this process shows what is stored from here on (older events are read on demand).
          log.shownSeq = head.lastSeq;
          log.turnStartSeq = head.turnStartSeq;
        }
        const waiting = log.waiting;
        log.waiting = [];
        for (const body of waiting) number(log, body);
        // Subscribers waiting may now have stored events to read; some may have been announced
        // while the count was read.
        for (const listener of log.listeners) listener();
        if (log.announcedSeq > log.shownSeq) void catchUp(log);
      },
      (error: unknown) => {
        log.loading = undefined;
        throw error;
      },
    );
    return log.loading;
  }

  /** Gives subscribers an event, in order: one past a gap waits for the gap to be read. */
  function show(log: Log, event: SessionEvent): void {
    if (event.seq <= log.shownSeq) return;
    if (event.seq > log.shownSeq + 1) {
      void catchUp(log);
      return;
    }
    log.shownSeq = event.seq;
    log.lastAt = Date.now();
    if (event.type === 'turn.started') log.turnStartSeq = event.seq;
    else if (event.type === 'turn.ended') log.turnStartSeq = undefined;
    log.events.push(event);
    for (const listener of log.listeners) listener();
  }

  /**
   * Reads the stored events this process has not shown yet (another instance's, or past a gap);
   * one reading per session at a time, which callers may wait for.
   */
  function catchUp(log: Log): Promise<void> {
    if (storage === undefined || !log.loaded) return Promise.resolve();
    if (log.catchingUp !== undefined) {
      // Events stored after the running reading began: it reads once more before it ends.
      log.readAgain = true;
      return log.catchingUp;
    }
    log.catchingUp = (async () => {
      try {
        for (;;) {
          log.readAgain = false;
          const page = await storage.read(log.sessionId, log.shownSeq, READ_PAGE);
          for (const event of page) show(log, event);
          if (page.length < READ_PAGE && !log.readAgain) return;
        }
      } catch (error) {
        options.logger?.warn({ err: error, sessionId: log.sessionId }, 'cannot read stored events');
      } finally {
        log.catchingUp = undefined;
      }
    })();
    return log.catchingUp;
  }

  /**
   * Catches up several logs: those free to read, in one query (each session's first page); the
   * others, and any whose page was full or that learnt of more meanwhile, one by one as `catchUp`.
   */
  function catchUpMany(batch: Iterable<Log>): void {
    if (storage === undefined) return;
    const free: Log[] = [];
    for (const log of batch) {
      if (log.loaded && log.catchingUp === undefined) free.push(log);
      else void catchUp(log);
    }
    if (free.length < 2) {
      for (const log of free) void catchUp(log);
      return;
    }
    const reading = storage.readMany(
      free.map((log) => ({ sessionId: log.sessionId, afterSeq: log.shownSeq })),
      MANY_PAGE,
    );
    for (const log of free) {
      log.readAgain = false;
      log.catchingUp = reading.then(
        (pages) => {
          const page = pages.get(log.sessionId) ?? [];
          for (const event of page) show(log, event);
          log.catchingUp = undefined;
          return page.length >= MANY_PAGE || log.readAgain ? catchUp(log) : undefined;
        },
        (error: unknown) => {
          log.catchingUp = undefined;
          options.logger?.warn({ err: error, sessionId: log.sessionId }, 'cannot read stored events');
        },
      );
    }
  }

  /** Logs announced as having stored events to read, caught up together at the end of the tick. */
  const announced = new Set<Log>();
  let announcedScheduled = false;
  function readAnnounced(log: Log): void {
    announced.add(log);
    if (announcedScheduled) return;
    announcedScheduled = true;
    setImmediate(() => {
      announcedScheduled = false;
      const batch = [...announced];
      announced.clear();
      catchUpMany(batch);
    });
  }

  /** How often an event (and its body, numbered again) was refused by the stored log. */
  const refusalsOf = new WeakMap<object, number>();
  /** Events of no turn (and their bodies, before they are numbered): numbered again when refused. */
  const standaloneBodies = new WeakSet<SessionEventBody>();
  const standalone = new WeakSet<SessionEvent>();

  const writer: EventWriter | undefined =
    storage === undefined
      ? undefined
      : createEventWriter({
          storage,
          ...(options.logger === undefined ? {} : { logger: options.logger }),
          stored: (event) => {
            const log = logs.get(event.sessionId);
            if (log === undefined) return;
            log.unwritten -= 1;
            show(log, event);
            // Announcements deferred while this process's own writes were on their way (see onStored).
            if (log.unwritten === 0 && log.announcedSeq > log.shownSeq && log.listeners.size > 0) void catchUp(log);
          },
          refused: (event) => {
            // Another instance stored an event under this number: this process's count is stale.
            const log = logs.get(event.sessionId);
            if (log === undefined) return;
            log.unwritten -= 1;
            const refusals = (refusalsOf.get(event) ?? 0) + 1;
            if (refusals > MAX_REFUSALS) {
              // Refused for what it is, not for its number (the late event of a turn another
              // followed): numbering it again would go on for ever.
              options.logger?.error(
                { sessionId: event.sessionId, type: event.type, refusals },
                'dropped an event the stored log keeps refusing',
              );
            } else if (standalone.delete(event) || options.runs?.(event.sessionId) === true) {
              const { seq: _seq, sessionId: _session, at: _at, ...body } = event;
              log.waiting.push(body as SessionEventBody);
              standaloneBodies.add(body as SessionEventBody);
              refusalsOf.set(body, refusals);
            }
            options.logger?.error(
              { sessionId: event.sessionId, seq: event.seq },
              'another instance numbered events of this session: its count is read again',
            );
            log.loaded = false;
            catchUpAfterReload(log);
          },
        });

  function catchUpAfterReload(log: Log): void {
    load(log)
      .then(() => catchUp(log))
      .catch((error: unknown) =>
        options.logger?.warn({ err: error, sessionId: log.sessionId }, 'cannot read where the stored events stand'),
      );
  }

  /** Numbers a body and hands it on: to the observers at once, to subscribers once stored. */
  function number(log: Log, body: SessionEventBody): SessionEvent | undefined {
    if (!log.loaded) {
      log.waiting.push(body);
      load(log).catch((error: unknown) =>
        options.logger?.warn({ err: error, sessionId: log.sessionId }, 'cannot read where the stored events stand'),
      );
      return undefined;
    }
    const event = { ...body, seq: log.nextSeq, sessionId: log.sessionId, at: new Date().toISOString() } as SessionEvent;
    if (standaloneBodies.delete(body)) standalone.add(event);
    const refusals = refusalsOf.get(body);
    if (refusals !== undefined) refusalsOf.set(event, refusals);
    log.nextSeq += 1;
    log.lastAt = Date.now();
    for (const observer of log.observers) observer(event);
    if (writer === undefined) {
      show(log, event);
    } else {
      log.unwritten += 1;
      writer.write(event);
    }
    return event;
  }

  /** Sessions with deltas waiting, flushed together once per tick. */
  const waitingDeltas = new Map<string, Log>();
  let flushScheduled = false;

  function flushDeltas(sessionId: string, log: Log): void {
    const { pending } = log;
    if (pending === undefined) return;
    log.pending = undefined;
    waitingDeltas.delete(sessionId);
    number(log, { type: 'message.delta', turnId: pending.turnId, text: pending.texts.join('') });
  }

  function flushAll(): void {
    flushScheduled = false;
    for (const [sessionId, log] of waitingDeltas) flushDeltas(sessionId, log);
  }

  const stopListening = storage?.onStored((sessionId, seq, carried) => {
    if (sessionId === undefined) {
      // Notifications may have been missed (the link to the database was down): look at every log.
      for (const log of logs.values()) if (log.listeners.size > 0) readAnnounced(log);
      return;
    }
    const log = logs.get(sessionId);
    if (log === undefined) return;
    log.announcedSeq = Math.max(log.announcedSeq, seq);
    // A number this process gave, still on its way back from the writer: the writer's answer shows
    // the event (or, refused, has the log read again), so reading it here would be a wasted query.
    // The announcement often arrives first, on the listening connection.
    if (log.unwritten > 0 && seq < log.nextSeq) return;
    if (log.listeners.size === 0 || seq <= log.shownSeq) return;
    if (carried !== undefined && log.loaded) {
      // The events came with their announcement: shown without a query (a gap before them is read).
      for (const event of carried) show(log, event);
      return;
    }
    readAnnounced(log);
  });

  const idOf = (event: SessionEvent) => `${epoch}:${event.seq}`;
  /** Tells a subscriber that events it should have seen are gone: reload, then follow on. */
  const resyncOf = (sessionId: string) =>
    tracked(`${epoch}:0`, { type: 'session.resync', seq: 0, sessionId, at: new Date().toISOString() } as SessionEvent);
  const sweep = setInterval(
    () => {
      const now = Date.now();
      for (const [sessionId, log] of logs) {
        const idle = log.listeners.size === 0 && now - log.lastAt > idleLogMs;
        if (!idle) continue;
        if (storage === undefined) {
          if (log.events.size() > 0) log.events.clear();
        } else if (
          log.observers.size === 0 &&
          log.unwritten === 0 &&
          log.pending === undefined &&
          log.loading === undefined
        ) {
          // Everything is stored: the log is read again when the session is used.
          logs.delete(sessionId);
        }
      }
    },
    Math.min(60_000, idleLogMs),
  );
  sweep.unref();

  return {
    publish(sessionId, body, publishOptions) {
      const log = logOf(sessionId);
      if (publishOptions?.standalone === true) standaloneBodies.add(body);
      if (body.type === 'message.delta') {
        if (log.pending?.turnId === body.turnId) {
          log.pending.texts.push(body.text);
          return undefined;
        }
        flushDeltas(sessionId, log);
        log.pending = { turnId: body.turnId, texts: [body.text] };
        waitingDeltas.set(sessionId, log);
        if (!flushScheduled) {
          flushScheduled = true;
          setImmediate(flushAll);
        }
        return undefined;
      }
      flushDeltas(sessionId, log);
      return number(log, body);
    },

    async *stream({ sessionId, lastEventId, fromNow, fromTurnStart, signal }) {
      const log = logOf(sessionId);
      let wake: (() => void) | undefined;
      const listener = () => wake?.();
      log.listeners.add(listener);
      const onAbort = () => wake?.();
      signal?.addEventListener('abort', onAbort);
      try {
        await load(log);
        let after = 0;
        const [idEpoch, idSeq] = (lastEventId ?? '').split(':');
        const seq = Number(idSeq);
        // A subscriber may have seen, through another instance, events this one has not read yet.
        if (storage !== undefined && idEpoch === epoch && seq > log.shownSeq) await catchUp(log);
        const firstKept = log.events.firstSeq(log.shownSeq + 1);
        if (lastEventId === null || lastEventId === undefined) {
          if (fromTurnStart === true) {
            after = (log.turnStartSeq ?? log.shownSeq + 1) - 1;
            // A turn whose start is no longer kept is followed from the oldest kept event, after a resync.
            if (storage === undefined && log.turnStartSeq !== undefined && log.turnStartSeq < firstKept) {
              yield resyncOf(sessionId);
              after = firstKept - 1;
            }
          } else if (fromNow === true) {
            after = log.shownSeq;
          }
        } else if (
          idEpoch === epoch &&
          Number.isInteger(seq) &&
          seq <= log.shownSeq &&
          (storage !== undefined || seq >= firstKept - 1)
        ) {
          after = seq;
        } else {
          yield resyncOf(sessionId);
          after = storage === undefined ? firstKept - 1 : log.shownSeq;
        }
        while (signal?.aborted !== true && logs.get(sessionId) === log) {
          // Sequence numbers are contiguous, so the next event's place is known.
          const first = log.events.firstSeq(log.shownSeq + 1);
          if (after + 1 < first) {
            const older =
              storage === undefined ? [] : await storage.read(sessionId, after, Math.min(READ_PAGE, first - 1 - after));
            const oldest = older[0]?.seq;
            if (oldest === undefined || oldest > after + 1) {
              // This subscriber fell behind what is kept: say so, rather than skip silently.
              yield resyncOf(sessionId);
              after = (oldest ?? first) - 1;
              continue;
            }
            for (const event of older) {
              if (event.seq !== after + 1) break;
              after = event.seq;
              yield tracked(idOf(event), event);
            }
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

    async openTurn(sessionId) {
      if (storage === undefined) return undefined;
      const { turnStartSeq } = await storage.head(sessionId);
      if (turnStartSeq === undefined) return undefined;
      const [started] = await storage.read(sessionId, turnStartSeq - 1, 1);
      return started?.type === 'turn.started' ? started.turnId : undefined;
    },

    forget(sessionId) {
      const log = logs.get(sessionId);
      logs.delete(sessionId);
      waitingDeltas.delete(sessionId);
      storage
        ?.forget(sessionId)
        .catch((error: unknown) => options.logger?.warn({ err: error, sessionId }, 'cannot delete stored events'));
      // Streams still open on a deleted session end.
      for (const listener of log?.listeners ?? []) listener();
    },

    async close() {
      clearInterval(sweep);
      flushAll();
      stopListening?.();
      await writer?.close();
      await storage?.close();
    },
  };
}

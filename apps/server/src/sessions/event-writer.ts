import type { Logger } from '@molf/logging';
import type { SessionEvent } from '@molf/protocol';
import { isConnectionError } from '../database/index.ts';
import type { StoredEventLog } from './stored-event-log.ts';

export type EventWriter = {
  /** Queues an event; it is stored with the others of this tick, in order. */
  write(event: SessionEvent): void;
  /** Waits for the queued events to be stored (or given up). */
  close(): Promise<void>;
};

/** Events stored in one statement at most (their announcement must fit PostgreSQL's 8,000 bytes). */
const BATCH = 100;
const RETRY_MIN_MS = 200;
const RETRY_MAX_MS = 5_000;

/**
 * Stores events in batches: every event published in one tick, of every session, goes in one
 * statement, so a thousand streaming sessions cost a few statements a tick, not one per event. While
 * the database is unreachable (or refuses a write) the events wait, in order, and the write is tried
 * again with a growing delay; subscribers see each event only once it is stored.
 */
export function createEventWriter(options: {
  storage: StoredEventLog;
  logger?: Logger;
  /** An event was stored: subscribers may see it. */
  stored: (event: SessionEvent) => void;
  /** An event's number was taken by another instance: it was not stored. */
  refused: (event: SessionEvent) => void;
}): EventWriter {
  const queue: SessionEvent[] = [];
  let running: Promise<void> | undefined;
  let retryMs = RETRY_MIN_MS;
  let closing = false;

  async function drain(): Promise<void> {
    while (queue.length > 0) {
      const batch = queue.slice(0, BATCH);
      let stored: SessionEvent[];
      try {
        stored = await options.storage.write(batch);
      } catch (error) {
        if (closing) {
          options.logger?.error(
            { err: error, events: queue.length },
            'cannot store session events before closing: they are lost',
          );
          queue.length = 0;
          return;
        }
        // Given up, an event would leave a hole in its session's numbers: it waits for the database instead.
        if (retryMs === RETRY_MIN_MS) {
          options.logger?.warn(
            { err: error, unreachable: isConnectionError(error) },
            'cannot store session events: trying again until the database takes them',
          );
        }
        await new Promise((resolveDelay) => setTimeout(resolveDelay, retryMs));
        retryMs = Math.min(RETRY_MAX_MS, retryMs * 2);
        continue;
      }
      retryMs = RETRY_MIN_MS;
      queue.splice(0, batch.length);
      const storedKeys = new Set(stored.map((event) => `${event.sessionId}:${event.seq}`));
      for (const event of batch) {
        if (storedKeys.has(`${event.sessionId}:${event.seq}`)) options.stored(event);
        else options.refused(event);
      }
    }
  }

  function start(): void {
    running ??= new Promise<void>((resolveTick) => setImmediate(resolveTick)).then(drain).finally(() => {
      running = undefined;
      if (queue.length > 0) start();
    });
  }

  return {
    write(event) {
      queue.push(event);
      start();
    },
    async close() {
      closing = true;
      while (running !== undefined) await running;
    },
  };
}

import type { JobMessage, ToolCallId } from '@molf/protocol';

export type OutboxEntry = {
  readonly seq: number;
  readonly message: JobMessage;
  readonly toolCallId: ToolCallId;
  /** Nothing left to send: a call that settled, or a cancel already yielded. */
  done: boolean;
};

/** Compact once this many entries are done and they are at least half of the queue. */
const COMPACT_AT = 64;

/**
 * One worker's ordered message queue. Appends, settling and reading on from a sequence number
 * cost O(1) or O(log n) whatever the number of calls in flight: finished entries are only
 * flagged, and dropped in batches.
 */
export type WorkerOutbox = {
  append(toolCallId: ToolCallId, message: JobMessage): OutboxEntry;
  /** Flags the entry done; the queue drops done entries in batches. */
  finish(entry: OutboxEntry): void;
  /** Live entries with a sequence number above `after`, including ones appended while iterating. */
  entriesAfter(after: number): Generator<OutboxEntry>;
  /** Resolves on the next append, or when `signal` aborts. */
  nextAppend(signal: AbortSignal): Promise<void>;
};

export function createWorkerOutbox(nextSeq: () => number): WorkerOutbox {
  let entries: OutboxEntry[] = [];
  let doneCount = 0;
  let waiters: Array<() => void> = [];

  /** Index of the first entry with seq > after (entries are sorted by seq). */
  function firstIndexAfter(after: number): number {
    let low = 0;
    let high = entries.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if ((entries[middle] as OutboxEntry).seq <= after) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  return {
    append(toolCallId, message) {
      const entry: OutboxEntry = { seq: nextSeq(), message, toolCallId, done: false };
      entries.push(entry);
      const wake = waiters;
      waiters = [];
      for (const resolve of wake) resolve();
      return entry;
    },

    finish(entry) {
      if (entry.done) return;
      entry.done = true;
      doneCount += 1;
      if (doneCount >= COMPACT_AT && doneCount * 2 >= entries.length) {
        entries = entries.filter((candidate) => !candidate.done);
        doneCount = 0;
      }
    },

    *entriesAfter(after) {
      let cursor = after;
      let current = entries;
      let index = firstIndexAfter(cursor);
      for (;;) {
        if (current !== entries) {
          // Compacted while the reader was suspended: find its place again.
          current = entries;
          index = firstIndexAfter(cursor);
        }
        const entry = current[index];
        if (entry === undefined) return;
        index += 1;
        if (entry.done) continue;
        cursor = entry.seq;
        yield entry;
      }
    },

    nextAppend(signal) {
      return new Promise<void>((resolve) => {
        if (signal.aborted) {
          resolve();
          return;
        }
        const done = () => {
          signal.removeEventListener('abort', done);
          resolve();
        };
        waiters.push(done);
        signal.addEventListener('abort', done, { once: true });
      });
    },
  };
}

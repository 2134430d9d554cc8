import type { SessionMessage } from '@molf/protocol';

export type HistoryCache = {
  /** The kept history of a session (the cache's own array: copy before changing it), or undefined. */
  get(sessionId: string): SessionMessage[] | undefined;
  /** Keeps a session's whole history; `size` is its stored size in characters. */
  set(sessionId: string, history: { messages: SessionMessage[]; size: number; inUse: boolean }): void;
  /** Adds a stored message to a kept history (nothing when the history is not kept). */
  append(sessionId: string, message: SessionMessage, size: number): void;
  /** A session in use is never evicted; an idle one may be, oldest use first. */
  setInUse(sessionId: string, inUse: boolean): void;
  delete(sessionId: string): void;
  /** Evicts idle histories unused for `idleMs`, then the oldest idle ones while over budget. */
  sweep(): void;
  /** Characters kept in all. */
  size(): number;
};

type Kept = { messages: SessionMessage[]; size: number; inUse: boolean; lastUsed: number };

/**
 * The parsed histories of live sessions, kept so that a turn does not re-read and re-validate the
 * whole history: bounded by the size of what is kept (in stored characters), evicting idle
 * sessions first by age, then oldest use first. A session in use stays kept even over the budget
 * (its turn needs it anyway); the budget is restored as sessions go idle.
 */
export function createHistoryCache(options: {
  /** Characters (of the stored form) kept at most across idle sessions. Default 32 M. */
  maxSize?: number;
  /** An idle history unused this long is evicted. Default 10 min. */
  idleMs?: number;
  /** Default `Date.now`. */
  now?: () => number;
}): HistoryCache {
  const maxSize = options.maxSize ?? 32_000_000;
  const idleMs = options.idleMs ?? 10 * 60_000;
  const now = options.now ?? Date.now;
  const kept = new Map<string, Kept>();
  let total = 0;

  function evict(sessionId: string): void {
    const entry = kept.get(sessionId);
    if (entry === undefined) return;
    total -= entry.size;
    kept.delete(sessionId);
  }

  function sweep(): void {
    const at = now();
    for (const [sessionId, entry] of kept) {
      if (!entry.inUse && at - entry.lastUsed >= idleMs) evict(sessionId);
    }
    if (total <= maxSize) return;
    const idle = [...kept].filter(([, entry]) => !entry.inUse).sort(([, a], [, b]) => a.lastUsed - b.lastUsed);
    for (const [sessionId] of idle) {
      if (total <= maxSize) break;
      evict(sessionId);
    }
  }

  return {
    get(sessionId) {
      const entry = kept.get(sessionId);
      if (entry === undefined) return undefined;
      entry.lastUsed = now();
      return entry.messages;
    },
    set(sessionId, { messages, size, inUse }) {
      evict(sessionId);
      kept.set(sessionId, { messages, size, inUse, lastUsed: now() });
      total += size;
      sweep();
    },
    append(sessionId, message, size) {
      const entry = kept.get(sessionId);
      if (entry === undefined) return;
      entry.messages.push(message);
      entry.size += size;
      entry.lastUsed = now();
      total += size;
    },
    setInUse(sessionId, inUse) {
      const entry = kept.get(sessionId);
      if (entry === undefined) return;
      entry.inUse = inUse;
      entry.lastUsed = now();
      if (!inUse) sweep();
    },
    delete: evict,
    sweep,
    size: () => total,
  };
}

import type { SessionEvent } from '@molf/protocol';

/**
 * Where session events are stored when more than one process serves them (PostgreSQL): numbered,
 * kept, and announced to every instance. The file backend has none: its events live in memory.
 */
export type StoredEventLog = {
  /** The first part of event ids: the same on every instance that shares the log, another with another log. */
  epoch: string;
  /** The session's last stored number, and the stored running turn's `turn.started` (undefined between turns). */
  head(sessionId: string): Promise<{ lastSeq: number; turnStartSeq: number | undefined }>;
  /**
   * Stores events (of any sessions; each session's in order) in one go, and announces them to every
   * instance. Returns those stored: an event whose number another instance stored first is not.
   */
  write(events: readonly SessionEvent[]): Promise<SessionEvent[]>;
  /** The session's stored events after `afterSeq`, oldest first, at most `limit`. */
  read(sessionId: string, afterSeq: number, limit: number): Promise<SessionEvent[]>;
  /**
   * `read` for many sessions in one go: each session's stored events after its `afterSeq`, oldest
   * first, at most `limit` per session. Sessions with none may be missing from the map.
   */
  readMany(
    requests: ReadonlyArray<{ sessionId: string; afterSeq: number }>,
    limit: number,
  ): Promise<Map<string, SessionEvent[]>>;
  /**
   * Calls `listener` with each session an instance stored events for, and the highest number
   * stored, and those events when the announcement carried them (the session's of that write, in
   * order); with undefined when announcements may have been missed (the link was down).
   */
  onStored(
    listener: (sessionId: string | undefined, seq: number, events?: readonly SessionEvent[]) => void,
  ): () => void;
  /** Deletes a session's stored events. */
  forget(sessionId: string): Promise<void>;
  /** Stops listening for announcements. */
  close(): Promise<void>;
};

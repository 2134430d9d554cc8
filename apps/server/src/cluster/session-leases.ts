/**
 * Which instance runs a session's turns. With one server it is always this one; with several on
 * one database, the holder of the session's lease (see `postgres-session-leases.ts`).
 */
/** How an instance lost a lease (see `SessionLeases.onLost`). */
export type LeaseLoss = 'unrenewed' | 'taken';

export type SessionLeases = {
  /** This instance's id. */
  instanceId: string;
  /** Takes the session's lease when it is free, expired or already this instance's; whether this instance holds it now. */
  claim(sessionId: string): Promise<boolean>;
  /** The instance holding the session's lease now, by the database; undefined when nobody does. */
  holderOf(sessionId: string): Promise<string | undefined>;
  /** Whether this instance holds the session's lease now (as far as it knows: renewed in time). */
  holds(sessionId: string): boolean;
  /**
   * Gives the lease back (the session is idle here); answers whether prompts wait in the session's
   * queue, read once the lease is given back: a prompt queued while it was held is not missed.
   */
  release(sessionId: string): Promise<{ waiting: boolean }>;
  /**
   * Tells the instance running the session that prompts wait in its queue; with `target`, that
   * instance alone is asked to take the session: it holds the session's worker, named so that it
   * need not read the session to find it.
   */
  wake(sessionId: string, target?: { instanceId: string; workerId?: string }): Promise<void>;
  /** Asks the instance running the session to abort its turn (a client of another instance pressed Esc). */
  requestAbort(sessionId: string): Promise<void>;
  /** Calls `listener` with each session whose abort another instance asked for. */
  onAbortRequested(listener: (sessionId: string) => void): () => void;
  /**
   * Calls `listener` with each session another instance woke (it queued a prompt, or a lease
   * expired), and the session's worker when the waker asked this instance by name for it.
   */
  onWake(listener: (sessionId: string, workerId: string | undefined) => void): () => void;
  /**
   * Calls `listener` with each session whose lease this instance lost, and how: `unrenewed`, its
   * renewals did not reach the database in time; `taken`, a renewal found it another instance's
   * (it had expired meanwhile). Its turn must stop here: another instance may run it now.
   */
  onLost(listener: (sessionId: string, how: LeaseLoss) => void): () => void;
  /** Sessions with prompts waiting or a turn that was running, whose lease is free: they need an instance. */
  unclaimed(): Promise<string[]>;
  /** Stops renewing; gives back every lease held. */
  close(): Promise<void>;
};

import type { DamagedSession, SessionInfo, SessionMessage, SessionParent, WorkerId } from '@molf/protocol';
import { z } from 'zod';

/** A prompt waiting for its turn, as the stores keep it (checked when read: a torn one cannot run). */
export const QueuedPromptSchema = z.object({
  messageId: z.string().min(1),
  text: z.string(),
  model: z.string().optional(),
  /** Skills the person loads with the prompt. */
  skills: z.array(z.string()).optional(),
  /** The cron job whose run sent it. */
  cronJobId: z.string().optional(),
  /** What an ask does in its turn when nobody answers (a cron run's), for the instance that runs it. */
  unattended: z.object({ policy: z.enum(['deny', 'wait']), waitMs: z.number(), runBy: z.string() }).optional(),
  at: z.string(),
});
export type QueuedPrompt = z.infer<typeof QueuedPromptSchema>;

/** A stored queued prompt read back; undefined when its text is not one (torn, or not a prompt). */
export function parseQueuedPrompt(text: string): QueuedPrompt | undefined {
  try {
    const parsed = QueuedPromptSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Where sessions and their histories are kept. Every method is asynchronous and says nothing of
 * how things are stored: the file store (`file-session-store.ts`) is one implementation, a database
 * can be another. A method given an unknown session id throws `session_not_found`.
 */
export type SessionStore = {
  create(options: {
    workerId: WorkerId;
    /** Default: `Session {date time}`, marked `untitled` until its first prompt names it. */
    name?: string | undefined;
    model?: string | undefined;
    /** Makes it a subagent's session. */
    parent?: SessionParent | undefined;
  }): Promise<SessionInfo>;
  /** Undefined for an unknown session; a damaged one throws `session_damaged` with the reason. */
  get(sessionId: string): Promise<SessionInfo | undefined>;
  /** Newest first, without reading any history; damaged sessions are listed apart with the reason. */
  list(filter: {
    workerId?: string | undefined;
    name?: string | undefined;
    /** Only the subagent sessions of this session. */
    parentSessionId?: string | undefined;
    /** Only sessions without a parent (no subagent's). */
    topLevel?: boolean | undefined;
    limit: number;
    offset: number;
  }): Promise<{
    sessions: SessionInfo[];
    total: number;
    damaged: DamagedSession[];
  }>;
  /** The whole history, oldest first: a copy the caller may change. */
  messages(sessionId: string): Promise<SessionMessage[]>;
  /**
   * Stores one message durably (before this resolves) at a cost that does not grow with the history.
   * A user message takes the queued prompt of its id out of the queue with it.
   */
  append(sessionId: string, message: SessionMessage): Promise<void>;
  /**
   * Keeps a prompt that waits for the running turn, so that a crash loses no prompt the client was
   * told was accepted; storing it as a message (`append`) takes it out, `dequeue` drops it unrun.
   */
  enqueue(sessionId: string, prompt: QueuedPrompt): Promise<void>;
  dequeue(sessionId: string, messageId: string): Promise<void>;
  /** The prompts waiting in the session's queue, oldest first (what another instance queued too). */
  queued(sessionId: string): Promise<QueuedPrompt[]>;
  /**
   * Changes the name or the model. `name` is a person's and always takes; `title` (the one its first
   * prompt gives) takes only while the session has the name it was created with (`untitled`).
   */
  update(sessionId: string, change: { name?: string; title?: string; model?: string }): Promise<SessionInfo>;
  /** Keeps an attachment's bytes with the session, once per content; returns their SHA-256 (hex). */
  putAttachment(sessionId: string, data: Uint8Array): Promise<string>;
  /** An attachment's bytes by SHA-256; undefined when the session has none such. */
  readAttachment(sessionId: string, sha256: string): Promise<Uint8Array | undefined>;
  setStatus(sessionId: string, status: SessionInfo['status']): Promise<void>;
  /** The session's turns ended for now: the store may let go of what it keeps ready for it. */
  idle(sessionId: string): Promise<void>;
  delete(sessionId: string): Promise<void>;
  /** Writes what is pending and lets go of every resource. */
  close(): Promise<void>;
};

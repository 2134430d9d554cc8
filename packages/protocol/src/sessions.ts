import { z } from 'zod';
import { ApprovalOutcomeSchema, ApprovalSchema, ApprovalScopeSchema, SessionIdSchema } from './approvals.ts';
import { ErrorCodeSchema } from './errors.ts';
import { FileDiffSchema } from './file-diff.ts';
import { WorkerIdSchema } from './ids.ts';
import { NO_CONTROL_CHARACTERS, oneLineName } from './one-line-name.ts';
import { ToolFullOutputSchema, ToolOutputRangeSchema } from './tool-output.ts';
import { CallUsageSchema, UsageTotalsSchema } from './usage.ts';

/** `provider/model`, e.g. `openai/gpt-4.1` or `ollama/qwen3:8b`. */
export const ModelIdSchema = z
  .string()
  .max(256)
  .regex(/^[A-Za-z0-9_.-]+\/\S+$/, 'a model id is provider/model, e.g. openai/gpt-4.1');

export const SessionStatusSchema = z.enum(['idle', 'busy']);

/** A subagent's session: the session whose `task` call started it, and the agent it runs. */
export const SessionParentSchema = z.object({
  sessionId: SessionIdSchema,
  /** The parent's `task` call. */
  toolCallId: z.string().max(128),
  agent: z.string().max(64),
});
export type SessionParent = z.infer<typeof SessionParentSchema>;

export const SessionInfoSchema = z.object({
  sessionId: SessionIdSchema,
  workerId: WorkerIdSchema,
  name: z.string(),
  /** Set on a subagent's session. */
  parent: SessionParentSchema.optional(),
  /** The session's model; prompts without one use it, then the server default. */
  model: z.string().optional(),
  createdAt: z.string(),
  updatedAt: z.string(),
  messageCount: z.number().int(),
  status: SessionStatusSchema,
  /**
   * Tokens and cost of every model call of the session and of its subagents' sessions, kept as
   * messages are stored. Absent for a session stored before usage was counted, until it is opened.
   */
  usage: UsageTotalsSchema.optional(),
  /**
   * Set while the session has the name the server gave it at its creation (`Session 2025-…`): its
   * first prompt names it then (`session.renamed`). A name a person gives is never replaced.
   */
  untitled: z.boolean().optional(),
});
export type SessionInfo = z.infer<typeof SessionInfoSchema>;

export const ToolCallInfoSchema = z.object({
  toolCallId: z.string(),
  toolName: z.string(),
  args: z.record(z.string(), z.unknown()),
});

const MessageBase = { id: z.string(), at: z.string() };

/** One stored message of a session; stored one per line, appended as soon as it is complete. */
/** A tool result's image or document as the session keeps it: the bytes are stored apart, by hash. */
export const StoredAttachmentSchema = z.object({
  /** SHA-256 of the bytes, hex: the name they are stored under. */
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  mimeType: z.string().min(1).max(255),
  size: z.number().int().nonnegative(),
  /** The source file, when the tool read one. */
  path: z.string().max(4_096).optional(),
});
export type StoredAttachment = z.infer<typeof StoredAttachmentSchema>;

export const SessionMessageSchema = z.discriminatedUnion('role', [
  z.object({
    ...MessageBase,
    role: z.literal('user'),
    text: z.string(),
    /** Set when a cron job's run sent the prompt (not a person). */
    cronJobId: z.string().optional(),
  }),
  z.object({
    ...MessageBase,
    role: z.literal('assistant'),
    text: z.string(),
    toolCalls: z.array(ToolCallInfoSchema),
    model: z.string(),
    finishReason: z.string().optional(),
    usage: CallUsageSchema.optional(),
    /** Set when the answer was cut short (abort, provider error). */
    interrupted: z.boolean().optional(),
  }),
  z.object({
    ...MessageBase,
    role: z.literal('tool'),
    toolCallId: z.string(),
    toolName: z.string(),
    output: z.string(),
    error: z.string().optional(),
    errorKind: z.string().optional(),
    truncated: z.boolean().optional(),
    /** Where the whole output is kept on the worker when `output` was cut (`sessions.toolOutput` reads it). */
    fullOutput: ToolFullOutputSchema.optional(),
    /** Images and documents the tool returned, stored beside the history by their content hash. */
    attachments: z.array(StoredAttachmentSchema).max(64).optional(),
    /** What an edit_file or write_file call changed (see `ToolResult.diff`). */
    diff: FileDiffSchema.optional(),
  }),
  /**
   * A summary of the conversation up to and including message `coversUntil`: from then on the model
   * sees this summary instead of those messages, followed by everything after them.
   */
  z.object({
    ...MessageBase,
    role: z.literal('summary'),
    text: z.string(),
    coversUntil: z.string(),
    model: z.string(),
    /** What the summarising call used. */
    usage: CallUsageSchema.optional(),
  }),
]);
export type SessionMessage = z.infer<typeof SessionMessageSchema>;

export const TurnEndReasonSchema = z.enum(['completed', 'aborted', 'error', 'step_limit', 'doom_loop']);

/** What happens in a session itself, in order; each carries the session's next sequence number. */
const OwnSessionEventBodySchema = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('turn.started'),
    turnId: z.string(),
    /** The stored user message the turn answers. */
    messageId: z.string(),
    /** That message's text (absent from servers older than this field). */
    prompt: z.string().optional(),
    /** Set when a cron job's run sent the prompt. */
    cronJobId: z.string().optional(),
    model: z.string(),
  }),
  z.object({ type: z.literal('message.queued'), messageId: z.string(), position: z.number().int() }),
  z.object({ type: z.literal('message.delta'), turnId: z.string(), text: z.string() }),
  z.object({ type: z.literal('message.completed'), turnId: z.string(), message: SessionMessageSchema }),
  z.object({
    type: z.literal('tool-call.started'),
    turnId: z.string(),
    toolCallId: z.string(),
    toolName: z.string(),
    args: z.record(z.string(), z.unknown()),
  }),
  z.object({
    type: z.literal('tool-call.ended'),
    turnId: z.string(),
    toolCallId: z.string(),
    toolName: z.string(),
    output: z.string(),
    error: z.string().optional(),
    errorKind: z.string().optional(),
    truncated: z.boolean(),
    /** Where the whole output is kept on the worker when `output` was cut (`sessions.toolOutput` reads it). */
    fullOutput: ToolFullOutputSchema.optional(),
    /** The images and documents stored with the result (`sessions.attachment` returns their bytes). */
    attachments: z.array(StoredAttachmentSchema).max(64).optional(),
    /** What an edit_file or write_file call changed (see `ToolResult.diff`). */
    diff: FileDiffSchema.optional(),
  }),
  z.object({ type: z.literal('status'), status: SessionStatusSchema }),
  z.object({
    type: z.literal('error'),
    /** The turn it stopped or troubled (absent when it belongs to no turn, and from older servers). */
    turnId: z.string().optional(),
    code: z.union([ErrorCodeSchema, z.string()]),
    message: z.string(),
  }),
  z.object({
    type: z.literal('turn.ended'),
    turnId: z.string(),
    reason: TurnEndReasonSchema,
    /** The turn's model calls, its subagents' included (absent from servers older than this field). */
    usage: UsageTotalsSchema.optional(),
    /** The session's usage once the turn ended, as `SessionInfo.usage` gives it. */
    sessionUsage: UsageTotalsSchema.optional(),
  }),
  /** A tool call of this session waits for a person (also on `approvals.events`). */
  z.object({ type: z.literal('approval.requested'), approval: ApprovalSchema }),
  z.object({
    type: z.literal('approval.resolved'),
    approvalId: z.string(),
    outcome: ApprovalOutcomeSchema,
    scope: ApprovalScopeSchema.optional(),
    by: z.string(),
    reason: z.string().optional(),
  }),
  /** The session's name changed: a person renamed it, or its first prompt titled it. */
  z.object({ type: z.literal('session.renamed'), name: z.string() }),
  /** Older messages were summarised: the model now sees the summary instead of them. */
  z.object({ type: z.literal('context.compacted'), summaryMessageId: z.string(), coversUntil: z.string() }),
  /** The subscriber's last event is older than the server keeps: reload the messages, then follow on. */
  z.object({ type: z.literal('session.resync') }),
]);
type OwnSessionEventBody = z.infer<typeof OwnSessionEventBodySchema>;

const EventStampSchema = z.object({ seq: z.number().int(), sessionId: SessionIdSchema, at: z.string() });

/**
 * An event of a subagent's session, shown in its parent's stream (with the parent's sequence
 * number, so a client resuming the parent misses none): `event` is as the child's own stream has it.
 */
export const SubagentEventBodySchema = z.object({
  type: z.literal('subagent.event'),
  /** The parent's `task` call that runs the child. */
  toolCallId: z.string(),
  agent: z.string(),
  childSessionId: SessionIdSchema,
  event: z.intersection(OwnSessionEventBodySchema, EventStampSchema),
});

/** What happens in a session, in order; each carries the session's next sequence number. */
export const SessionEventBodySchema = z.discriminatedUnion('type', [
  ...OwnSessionEventBodySchema.options,
  SubagentEventBodySchema,
]);
export type SessionEventBody = z.infer<typeof SessionEventBodySchema>;
export type SessionEvent = SessionEventBody & { seq: number; sessionId: string; at: string };
/** An event of a session's own (not a subagent's, wrapped). */
export type OwnSessionEvent = OwnSessionEventBody & { seq: number; sessionId: string; at: string };

/** A session's name as a person gives it: one line of text, without control characters (NUL, line breaks…). */
export const SessionNameSchema = oneLineName('a session name', 200);

export const SessionCreateInputSchema = z.object({
  workerId: WorkerIdSchema,
  name: SessionNameSchema.optional(),
  model: ModelIdSchema.optional(),
});

/** A stored session that cannot be used: its metadata is unreadable and its history could not rebuild it. */
export const DamagedSessionSchema = z.object({ sessionId: z.string(), reason: z.string() });
export type DamagedSession = z.infer<typeof DamagedSessionSchema>;

export const SessionListInputSchema = z
  .object({
    workerId: WorkerIdSchema.optional(),
    /** Only the subagent sessions of this session. Default: every session. */
    parentSessionId: SessionIdSchema.optional(),
    /**
     * Only sessions without a parent: a subagent's session is then reached through its parent's
     * `task` call. Default false (subagents' sessions listed too).
     */
    topLevel: z.boolean().optional(),
    /** Case-insensitive part of the name. */
    name: z.string().max(200).regex(NO_CONTROL_CHARACTERS, 'a name holds no control characters').optional(),
    limit: z.number().int().min(1).max(200).default(50),
    offset: z.number().int().min(0).default(0),
  })
  .refine((input) => !(input.topLevel === true && input.parentSessionId !== undefined), {
    message: 'topLevel and parentSessionId exclude each other: a subagent session always has a parent',
    path: ['topLevel'],
  });

export const SessionIdInputSchema = z.object({ sessionId: SessionIdSchema });

/**
 * `sessions.get`: a session and its stored messages, oldest first. Without `limit`, every message
 * (before `before`); with it, the last `limit` of them, so a client opens a long session with its
 * end and reads older pages as the reader scrolls up (`before` = the `start` of the page it has).
 */
export const SessionGetInputSchema = z.object({
  sessionId: SessionIdSchema,
  limit: z.number().int().min(1).max(100_000).optional(),
  /** Messages before this index only (default: all of them). */
  before: z.number().int().min(0).optional(),
});

export const SessionGetOutputSchema = z.object({
  session: SessionInfoSchema,
  messages: z.array(SessionMessageSchema),
  /**
   * The index of the first message given in the whole history: older ones exist when it is above 0.
   * A page never starts with a tool result, so each result comes with its call (a page may hold a
   * few more messages than `limit` for it).
   */
  start: z.number().int().min(0),
  /** How many messages the session has. */
  total: z.number().int().min(0),
});

/** `sessions.toolOutput`: a page of the whole output of one of the session's cut tool results. */
export const SessionToolOutputInputSchema = ToolOutputRangeSchema.extend({
  sessionId: SessionIdSchema,
  /** The call's id as the session's messages and events name it. */
  toolCallId: z.string().min(1).max(256),
});

/** Most bytes `sessions.attachment` returns at once. */
export const MAX_ATTACHMENT_FETCH_BYTES = 20 * 1024 * 1024;

/** `sessions.attachment`: the bytes of an image or document stored with one of the session's tool results. */
export const SessionAttachmentInputSchema = z.object({
  sessionId: SessionIdSchema,
  sha256: z.string().regex(/^[0-9a-f]{64}$/, 'sha256 is 64 lowercase hex digits'),
});
export const SessionAttachmentSchema = z.object({
  mimeType: z.string(),
  size: z.number().int().nonnegative(),
  /** The source file, when the tool read one. */
  path: z.string().optional(),
  base64: z.string(),
});
export type SessionAttachment = z.infer<typeof SessionAttachmentSchema>;

export const SessionRenameInputSchema = z.object({
  sessionId: SessionIdSchema,
  name: SessionNameSchema,
});

/** Largest prompt accepted, in characters. */
export const MAX_PROMPT_CHARS = 200_000;

export const SessionPromptInputSchema = z.object({
  sessionId: SessionIdSchema,
  text: z.string().min(1).max(MAX_PROMPT_CHARS),
  model: ModelIdSchema.optional(),
  /**
   * Skills of the session's worker the person loads with this prompt (`/name` in `molf chat`): each
   * is stored before the prompt as a `skill` call and its result, as if the model had asked.
   */
  skills: z.array(z.string().min(1).max(64)).max(16).optional(),
});

export const SessionEventsInputSchema = z.object({
  sessionId: SessionIdSchema,
  /** Set by the tRPC client on reconnect: the id of the last event received. */
  lastEventId: z.string().max(128).nullish(),
  /** Without a last event id: start with the next event instead of every kept one. */
  fromNow: z.boolean().optional(),
  /**
   * Without a last event id: start with the running turn's `turn.started` (with the next event when
   * none runs). A client that loaded the stored messages sees the turn in progress, text included.
   */
  fromTurnStart: z.boolean().optional(),
});

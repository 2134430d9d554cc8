import { z } from 'zod';
import { SessionIdSchema } from './approvals.ts';
import { WorkerIdSchema } from './ids.ts';
import { oneLineName } from './one-line-name.ts';
import { MAX_PROMPT_CHARS, ModelIdSchema } from './sessions.ts';

/** A cron job's id as the server makes it (`cj_` and hex digits). */
export const CronJobIdSchema = z.string().regex(/^cj_[0-9a-f]{8,32}$/, 'a cron job id is cj_ and 8 to 32 hex digits');

/** Jobs one worker may have: a model asked to "watch" something cannot fill the server with timers. */
export const MAX_CRON_JOBS_PER_WORKER = 200;

/** The shortest `every` interval, unless the server's configuration lowers it. */
export const DEFAULT_MIN_CRON_INTERVAL_MS = 60_000;

/**
 * When a job runs, as stored: resolved from what a person or the model wrote (`CronScheduleInput`),
 * with absolute times in ISO 8601 (UTC).
 */
export const CronScheduleSchema = z.discriminatedUnion('kind', [
  /** Once, at this time. */
  z.object({ kind: z.literal('at'), at: z.iso.datetime({ offset: true }) }),
  /** On `anchor + k × everyMs` (the anchor defaults to when the job was made). */
  z.object({
    kind: z.literal('every'),
    everyMs: z.number().int().positive(),
    anchor: z.iso.datetime({ offset: true }),
  }),
  /** A 5- or 6-field cron expression (seconds first when 6), read in an IANA time zone. */
  z.object({ kind: z.literal('cron'), expression: z.string().min(1).max(256), timezone: z.string().min(1).max(64) }),
]);
export type CronSchedule = z.infer<typeof CronScheduleSchema>;

/**
 * A schedule as written: exactly one of `at` (an ISO 8601 time, or a duration from now like `20m`),
 * `every` (a duration: `30s`, `5m`, `2h`, `1d`, decimals allowed; optional `anchor`, an ISO 8601
 * time) or `cron` (an expression; optional `tz`, an IANA zone, default the server's).
 */
export const CronScheduleInputSchema = z
  .object({
    at: z.string().min(1).max(64).optional(),
    every: z.string().min(1).max(32).optional(),
    anchor: z.string().min(1).max(64).optional(),
    cron: z.string().min(1).max(256).optional(),
    tz: z.string().min(1).max(64).optional(),
  })
  .strict();
export type CronScheduleInput = z.infer<typeof CronScheduleInputSchema>;

/** Where a run's prompt goes: a given session, or a fresh session per run named after the job. */
export const CronTargetSchema = z.union([
  z.object({ type: z.literal('session'), sessionId: SessionIdSchema }),
  z.object({ type: z.literal('new') }),
]);
export type CronTarget = z.infer<typeof CronTargetSchema>;

/**
 * What a run does with a tool call that asks, when nobody answers: `deny` at once (the default),
 * or `wait` up to `onAskWaitMs` for a person, then deny. Never allow.
 */
export const CronOnAskSchema = z.enum(['deny', 'wait']);

/** After the server was down over slots: run once for all of them (`run_once`), or `skip` to the next. */
export const CronMissedSchema = z.enum(['run_once', 'skip']);

export const CronRunOutcomeSchema = z.enum([
  /** The prompt started a turn. */
  'started',
  /** The session was busy: the prompt waits in its queue. */
  'queued',
  /** It could not run (worker offline, session gone, queue full): see `reason`. */
  'failed',
  /** Nothing to do, so no turn and no model call: a heartbeat with an empty or absent HEARTBEAT.md. */
  'skipped',
]);

/** A time as the server stores it: ISO 8601 with an offset (a damaged file's garbage is refused). */
const IsoTimeSchema = z.iso.datetime({ offset: true });

export const CronLastRunSchema = z.object({
  /** When it fired. */
  at: IsoTimeSchema,
  /** The slot it was for (the scheduled time). */
  scheduledFor: IsoTimeSchema,
  outcome: CronRunOutcomeSchema,
  reason: z.string().optional(),
  sessionId: z.string().optional(),
  messageId: z.string().optional(),
});
export type CronLastRun = z.infer<typeof CronLastRunSchema>;

/** Who made a job: the person's client, or a session's `cron` tool call they approved. */
export const CronCreatorSchema = z.object({
  credentialId: z.string().optional(),
  client: z.string().optional(),
  sessionId: z.string().optional(),
  toolCallId: z.string().optional(),
});
export type CronCreator = z.infer<typeof CronCreatorSchema>;

export const CronJobSchema = z.object({
  jobId: CronJobIdSchema,
  name: z.string().min(1).max(128),
  workerId: WorkerIdSchema,
  schedule: CronScheduleSchema,
  /** No run after this time (ISO 8601). */
  until: IsoTimeSchema.optional(),
  /** No run after this many. */
  maxRuns: z.number().int().positive().optional(),
  prompt: z.string().min(1).max(MAX_PROMPT_CHARS),
  target: CronTargetSchema,
  model: ModelIdSchema.optional(),
  onAsk: CronOnAskSchema,
  /** How long `wait` waits for a person (ms). */
  onAskWaitMs: z.number().int().positive().optional(),
  missed: CronMissedSchema,
  enabled: z.boolean(),
  createdBy: CronCreatorSchema,
  createdAt: IsoTimeSchema,
  updatedAt: IsoTimeSchema,
  /** The next run's time; absent when the job will not run again (done, disabled, past `until`). */
  nextRunAt: IsoTimeSchema.optional(),
  runs: z.number().int().nonnegative(),
  lastRun: CronLastRunSchema.optional(),
  /** Failed runs in a row: each doubles the wait before the retry (30 s, up to 1 h). */
  consecutiveFailures: z.number().int().nonnegative(),
  /** Set while the next run retries a failed slot: that slot (the run's `scheduledFor`). */
  retrySlot: IsoTimeSchema.optional(),
  /**
   * The worker's heartbeat: each run sends the checklist in the project's HEARTBEAT.md (skipped
   * when it is empty or absent), and the run is silent unless the answer reports something.
   */
  heartbeat: z.boolean().optional(),
});
export type CronJob = z.infer<typeof CronJobSchema>;

/** `session`: a session id, or `new` for a fresh session per run. */
const CronSessionChoiceSchema = z.union([SessionIdSchema, z.literal('new')]);

/** Fields a job is made or changed with (RPC and the `cron` tool). */
const CronJobFieldsSchema = {
  name: oneLineName('a job name', 128),
  schedule: CronScheduleInputSchema,
  prompt: z.string().min(1).max(MAX_PROMPT_CHARS),
  session: CronSessionChoiceSchema,
  model: ModelIdSchema,
  onAsk: CronOnAskSchema,
  /** For `onAsk: wait`: how long to wait for a person, 1 s to 24 h (default 10 min). */
  onAskWaitMs: z
    .number()
    .int()
    .min(1_000)
    .max(24 * 3_600_000),
  missed: CronMissedSchema,
  /** An ISO 8601 time, or a duration from now (`3d`). */
  until: z.string().min(1).max(64),
  maxRuns: z.number().int().positive().max(1_000_000),
  enabled: z.boolean(),
};

/** `cron.add`: a new job on a worker. Without `session`: a new session per run. */
export const CronAddInputSchema = z
  .object({
    workerId: WorkerIdSchema,
    name: CronJobFieldsSchema.name.optional(),
    schedule: CronJobFieldsSchema.schedule,
    prompt: CronJobFieldsSchema.prompt,
    session: CronJobFieldsSchema.session.optional(),
    model: CronJobFieldsSchema.model.optional(),
    onAsk: CronJobFieldsSchema.onAsk.optional(),
    onAskWaitMs: CronJobFieldsSchema.onAskWaitMs.optional(),
    missed: CronJobFieldsSchema.missed.optional(),
    until: CronJobFieldsSchema.until.optional(),
    maxRuns: CronJobFieldsSchema.maxRuns.optional(),
    enabled: CronJobFieldsSchema.enabled.optional(),
  })
  .strict();
export type CronAddInput = z.infer<typeof CronAddInputSchema>;

/** `cron.update`: what changes; `null` clears `model`, `until` and `maxRuns`. */
export const CronUpdateInputSchema = z
  .object({
    jobId: CronJobIdSchema,
    name: CronJobFieldsSchema.name.optional(),
    schedule: CronJobFieldsSchema.schedule.optional(),
    prompt: CronJobFieldsSchema.prompt.optional(),
    session: CronJobFieldsSchema.session.optional(),
    model: CronJobFieldsSchema.model.nullable().optional(),
    onAsk: CronJobFieldsSchema.onAsk.optional(),
    onAskWaitMs: CronJobFieldsSchema.onAskWaitMs.optional(),
    missed: CronJobFieldsSchema.missed.optional(),
    until: CronJobFieldsSchema.until.nullable().optional(),
    maxRuns: CronJobFieldsSchema.maxRuns.nullable().optional(),
    enabled: CronJobFieldsSchema.enabled.optional(),
  })
  .strict();
export type CronUpdateInput = z.infer<typeof CronUpdateInputSchema>;

export const CronJobIdInputSchema = z.object({ jobId: CronJobIdSchema });
export const CronListInputSchema = z.object({ workerId: WorkerIdSchema.optional() });

/** What the scheduler tells clients (`cron.events`). */
export const CronEventSchema = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('cron.fired'),
    jobId: CronJobIdSchema,
    workerId: WorkerIdSchema,
    name: z.string(),
    scheduledFor: z.string(),
    sessionId: z.string(),
    messageId: z.string(),
    /** The session was busy: the prompt waits in its queue. */
    queued: z.boolean(),
    at: z.string(),
  }),
  z.object({
    type: z.literal('cron.failed'),
    jobId: CronJobIdSchema,
    workerId: WorkerIdSchema,
    name: z.string(),
    scheduledFor: z.string(),
    reason: z.string(),
    /** When it is tried again; absent when it is not (the job is done or disabled). */
    retryAt: z.string().optional(),
    at: z.string(),
  }),
  /** A heartbeat's answer reported something (it began with the marker the prompt asks for). */
  z.object({
    type: z.literal('cron.reported'),
    jobId: CronJobIdSchema,
    workerId: WorkerIdSchema,
    name: z.string(),
    sessionId: z.string(),
    /** What the answer reports, the marker removed. */
    text: z.string(),
    at: z.string(),
  }),
]);

/** `cron.heartbeat`: turns a worker's heartbeat on (every `every`, default 30 min) or off. */
export const CronHeartbeatInputSchema = z
  .object({
    workerId: WorkerIdSchema,
    enabled: z.boolean(),
    every: z.string().min(1).max(32).optional(),
  })
  .strict();
export type CronHeartbeatInput = z.infer<typeof CronHeartbeatInputSchema>;
export type CronEvent = z.infer<typeof CronEventSchema>;

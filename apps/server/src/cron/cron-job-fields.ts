import { randomBytes } from 'node:crypto';
import {
  type CronAddInput,
  type CronCreator,
  type CronJob,
  type CronSchedule,
  type CronTarget,
  type CronUpdateInput,
  describeCronSchedule,
  MolfError,
  printableName,
  type WorkerId,
} from '@molf/protocol';
import { nextRunAfter, resolveSchedule, resolveUntil } from './cron-schedule.ts';

/** What resolving a job's fields needs to know: the time, the server's zone and minimum interval. */
export type CronFieldContext = { now: Date; defaultTimezone: string; minIntervalMs: number };

function toTarget(session: string | undefined, fallback: CronTarget): CronTarget {
  if (session === undefined) return fallback;
  return session === 'new' ? { type: 'new' } : { type: 'session', sessionId: session };
}

/**
 * The next slot a job waits for after `after`, or undefined when it will not run again: disabled,
 * its runs used up, or the slot past `until`.
 */
export function nextRunOf(
  job: Pick<CronJob, 'schedule' | 'enabled' | 'runs' | 'maxRuns' | 'until'>,
  after: Date,
): string | undefined {
  if (!job.enabled) return undefined;
  if (job.maxRuns !== undefined && job.runs >= job.maxRuns) return undefined;
  const next = nextRunAfter(job.schedule, after);
  if (next === undefined) return undefined;
  if (job.until !== undefined && next.getTime() > Date.parse(job.until)) return undefined;
  return next.toISOString();
}

/** A job's default name: what it does and when (`every 5m: run the tests`). */
function defaultName(schedule: CronSchedule, prompt: string): string {
  // Names are shown on one line: a prompt's control characters (a CR, an ESC colour code) are not.
  const firstLine = printableName(prompt.split(/\r?\n/, 1)[0]?.trim() ?? '');
  const text = `${describeCronSchedule(schedule)}: ${firstLine}`;
  return text.length > 80 ? `${text.slice(0, 79)}…` : text;
}

/**
 * A new job from what was written (`cron.add`, the `cron` tool), checked: the schedule resolved,
 * `until` in the future, the first run computed. `defaultTarget` is where runs go without
 * `session`: the calling session for the tool, a new session per run for a client.
 */
export function newCronJob(
  input: CronAddInput,
  context: CronFieldContext & { createdBy: CronCreator; defaultTarget: CronTarget; heartbeat?: boolean },
): CronJob {
  const schedule = resolveSchedule(input.schedule, context);
  const at = context.now.toISOString();
  const job: CronJob = {
    jobId: `cj_${randomBytes(8).toString('hex')}`,
    name: input.name ?? defaultName(schedule, input.prompt),
    workerId: input.workerId as WorkerId,
    schedule,
    ...(input.until === undefined ? {} : { until: resolveUntil(input.until, context.now) }),
    ...(input.maxRuns === undefined ? {} : { maxRuns: input.maxRuns }),
    prompt: input.prompt,
    target: toTarget(input.session, context.defaultTarget),
    ...(input.model === undefined ? {} : { model: input.model }),
    onAsk: input.onAsk ?? 'deny',
    ...(input.onAskWaitMs === undefined ? {} : { onAskWaitMs: input.onAskWaitMs }),
    missed: input.missed ?? 'run_once',
    enabled: input.enabled ?? true,
    createdBy: context.createdBy,
    createdAt: at,
    updatedAt: at,
    runs: 0,
    consecutiveFailures: 0,
    ...(context.heartbeat === true ? { heartbeat: true } : {}),
  };
  const nextRunAt = nextRunOf(job, context.now);
  refuseNeverRunning(job, nextRunAt);
  return nextRunAt === undefined ? job : { ...job, nextRunAt };
}

/** A job enabled with no run ahead only because of its `until` would never run: refused, naming `until`. */
function refuseNeverRunning(job: CronJob, nextRunAt: string | undefined): void {
  if (!job.enabled || nextRunAt !== undefined || job.until === undefined) return;
  if (job.maxRuns !== undefined && job.runs >= job.maxRuns) return;
  throw new MolfError('invalid_input', `until: the job would never run: its next slot comes after ${job.until}`, {
    field: 'until',
  });
}

/**
 * A job with a change applied, checked like a new one. A new schedule, `until`, `maxRuns` or
 * enabling it again aims the next run anew from now; a failure streak ends with a new schedule.
 */
export function updatedCronJob(job: CronJob, change: CronUpdateInput, context: CronFieldContext): CronJob {
  const schedule = change.schedule === undefined ? job.schedule : resolveSchedule(change.schedule, context);
  const { model: _model, until: _until, maxRuns: _maxRuns, nextRunAt: _next, ...kept } = job;
  const model = change.model === undefined ? job.model : (change.model ?? undefined);
  const until =
    change.until === undefined
      ? job.until
      : change.until === null
        ? undefined
        : resolveUntil(change.until, context.now);
  const maxRuns = change.maxRuns === undefined ? job.maxRuns : (change.maxRuns ?? undefined);
  const updated: CronJob = {
    ...kept,
    ...(change.name === undefined ? {} : { name: change.name }),
    schedule,
    ...(change.prompt === undefined ? {} : { prompt: change.prompt }),
    target: toTarget(change.session, job.target),
    ...(model === undefined ? {} : { model }),
    ...(until === undefined ? {} : { until }),
    ...(maxRuns === undefined ? {} : { maxRuns }),
    ...(change.onAsk === undefined ? {} : { onAsk: change.onAsk }),
    ...(change.onAskWaitMs === undefined ? {} : { onAskWaitMs: change.onAskWaitMs }),
    ...(change.missed === undefined ? {} : { missed: change.missed }),
    ...(change.enabled === undefined ? {} : { enabled: change.enabled }),
    ...(change.schedule === undefined ? {} : { consecutiveFailures: 0 }),
    updatedAt: context.now.toISOString(),
  };
  const reaim =
    change.schedule !== undefined ||
    change.until !== undefined ||
    change.maxRuns !== undefined ||
    (change.enabled === true && !job.enabled) ||
    job.nextRunAt === undefined;
  const nextRunAt = !updated.enabled ? undefined : reaim ? nextRunOf(updated, context.now) : job.nextRunAt;
  if (change.until !== undefined && change.until !== null) refuseNeverRunning(updated, nextRunAt);
  // Aimed anew, the next run is a slot of the schedule, not a retry of the one that failed.
  const { retrySlot: _retry, ...fresh } = updated;
  const base = reaim || !updated.enabled ? fresh : updated;
  return nextRunAt === undefined ? base : { ...base, nextRunAt };
}

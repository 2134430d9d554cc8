import type { CronEvent, CronJob } from '@molf/protocol';
import { nextRunOf } from './cron-job-fields.ts';
import type { CronFireResult } from './cron-scheduler.ts';

/** The first retry waits this long, each next one twice as long, up to `MAX_BACKOFF_MS`. */
export const FIRST_BACKOFF_MS = 30_000;
export const MAX_BACKOFF_MS = 3_600_000;

export function backoffMs(consecutiveFailures: number): number {
  return Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** Math.max(0, consecutiveFailures - 1));
}

export function withNextRun(job: CronJob, nextRunAt: string | undefined): CronJob {
  const { nextRunAt: _old, ...rest } = job;
  return nextRunAt === undefined ? rest : { ...rest, nextRunAt };
}

export function withoutRetry(job: CronJob): CronJob {
  const { retrySlot: _slot, ...rest } = job;
  return rest;
}

/**
 * A job with one run recorded, and what clients are told of it (nothing for a skipped run).
 * A scheduled run that started or queued moves on from the later of its slot and now (a late run is
 * not repeated); one that failed keeps its slot for a retry after a doubling wait (never past
 * `until`) or, not worth retrying, moves on. A run on request leaves the schedule as it was, but
 * counts towards `maxRuns`.
 */
export function recordRun(
  current: CronJob,
  result: CronFireResult,
  run: { scheduledFor: Date; nowMs: number; scheduled: boolean },
): { job: CronJob; event?: CronEvent } {
  const { scheduledFor, nowMs, scheduled } = run;
  const at = new Date(nowMs).toISOString();
  const after = new Date(Math.max(nowMs, scheduledFor.getTime()));
  const lastRun = {
    at,
    scheduledFor: scheduledFor.toISOString(),
    outcome: result.outcome,
    ...(result.outcome === 'failed' || result.outcome === 'skipped' ? { reason: result.reason } : {}),
    ...('sessionId' in result && result.sessionId !== undefined ? { sessionId: result.sessionId } : {}),
    ...(result.outcome === 'started' || result.outcome === 'queued' ? { messageId: result.messageId } : {}),
  };
  const base = {
    jobId: current.jobId,
    workerId: current.workerId,
    name: current.name,
    scheduledFor: lastRun.scheduledFor,
  };

  if (result.outcome === 'skipped') {
    // Not a run: nothing counted, the failure streak ended, on to the next slot.
    const skipped = { ...current, consecutiveFailures: scheduled ? 0 : current.consecutiveFailures, lastRun };
    return {
      job: scheduled ? withoutRetry(withNextRun(skipped, nextRunOf(skipped, after))) : skipped,
    };
  }

  if (result.outcome !== 'failed') {
    const ran = {
      ...current,
      runs: current.runs + 1,
      consecutiveFailures: scheduled ? 0 : current.consecutiveFailures,
      lastRun,
    };
    const nextRunAt = scheduled
      ? nextRunOf(ran, after)
      : ran.maxRuns !== undefined && ran.runs >= ran.maxRuns
        ? undefined
        : current.nextRunAt;
    return {
      job: scheduled ? withoutRetry(withNextRun(ran, nextRunAt)) : withNextRun(ran, nextRunAt),
      event: {
        type: 'cron.fired',
        ...base,
        sessionId: result.sessionId,
        messageId: result.messageId,
        queued: result.outcome === 'queued',
        at,
      },
    };
  }

  // A run by hand that fails says nothing of the schedule's streak.
  const failures = scheduled ? current.consecutiveFailures + 1 : current.consecutiveFailures;
  const failed = { ...current, consecutiveFailures: failures, lastRun };
  const retryAt = new Date(nowMs + backoffMs(failures)).toISOString();
  const retrying =
    scheduled && result.retry && current.enabled && (current.until === undefined || retryAt <= current.until);
  const job = !scheduled
    ? failed
    : retrying
      ? { ...withNextRun(failed, retryAt), retrySlot: scheduledFor.toISOString() }
      : withoutRetry(withNextRun(failed, nextRunOf(failed, after)));
  return {
    job,
    event: { type: 'cron.failed', ...base, reason: result.reason, ...(retrying ? { retryAt } : {}), at },
  };
}

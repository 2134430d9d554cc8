import {
  type CronJob,
  type CronLastRun,
  DEFAULT_CRON_ON_ASK_WAIT_MS,
  formatCronDuration,
  formatUtcTime,
} from '@molf/protocol';

/**
 * What state a job is in, as the Scheduled view shows it: `paused` (disabled), `done` (it will not
 * run again: an `at` job that ran, `maxRuns` used, past `until`), `failing` (scheduled runs failed
 * in a row; it retries with a growing wait) or `active`.
 */
export type CronJobState =
  | { type: 'paused' }
  | { type: 'done' }
  | { type: 'failing'; failures: number; retryAt: string | undefined }
  | { type: 'active' };

export function toCronJobState(job: CronJob): CronJobState {
  if (!job.enabled) return { type: 'paused' };
  if (job.consecutiveFailures > 0) {
    // A slot given up (its session gone) moves on: only a retried slot's next run is a retry.
    const retryAt = job.retrySlot === undefined ? undefined : job.nextRunAt;
    return { type: 'failing', failures: job.consecutiveFailures, retryAt };
  }
  if (job.nextRunAt === undefined) return { type: 'done' };
  return { type: 'active' };
}

/** The state in a few words: `paused`, `failing: 3 failures in a row`… */
export function describeCronJobState(state: CronJobState): string {
  switch (state.type) {
    case 'paused':
      return 'paused';
    case 'done':
      return 'done: it will not run again';
    case 'failing':
      return `failing: ${state.failures === 1 ? '1 failure' : `${state.failures} failures in a row`}${
        state.retryAt === undefined ? '' : `, retried at ${formatUtcTime(state.retryAt)}`
      }`;
    case 'active':
      return 'active';
  }
}

/** Runs so far, of the most when there is a limit: `3` or `3 of 10`. */
export function describeCronRuns(job: Pick<CronJob, 'runs' | 'maxRuns'>): string {
  return job.maxRuns === undefined ? String(job.runs) : `${job.runs} of ${job.maxRuns}`;
}

/** What a run does with a call that asks: `deny at once` or `wait 10m for a person, then deny`. */
export function describeCronOnAsk(job: Pick<CronJob, 'onAsk' | 'onAskWaitMs'>): string {
  switch (job.onAsk) {
    case 'deny':
      return 'deny at once';
    case 'wait':
      return `wait ${formatCronDuration(job.onAskWaitMs ?? DEFAULT_CRON_ON_ASK_WAIT_MS)} for a person, then deny`;
  }
}

/** How runs that did not fail went, in words; an outcome not known here is shown as it is named. */
const OUTCOME_WORDS: Readonly<Partial<Record<string, string>>> = {
  started: 'started',
  queued: 'queued behind the running turn',
  skipped: 'skipped: nothing to do',
};

/** How a run went, in words: `started`, `queued behind the running turn`, `failed: <reason>`. */
export function describeCronOutcome(run: Pick<CronLastRun, 'outcome' | 'reason'>): string {
  if (run.outcome === 'failed') return run.reason === undefined ? 'failed' : `failed: ${run.reason}`;
  return OUTCOME_WORDS[run.outcome] ?? run.outcome;
}

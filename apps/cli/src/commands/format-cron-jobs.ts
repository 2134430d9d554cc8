import type { CronJob, CronSchedule } from '@molf/protocol';
import { formatTable } from './format-table.ts';

/** Longest name and reason cell; `--json` has them whole. */
const MAX_CELL = 48;

/** How long `onAsk: wait` waits when the job does not say (the server's default). */
const DEFAULT_ON_ASK_WAIT_MS = 10 * 60_000;

const DURATION_UNITS = [
  ['d', 24 * 3_600_000],
  ['h', 3_600_000],
  ['m', 60_000],
  ['s', 1_000],
] as const;

function cut(text: string): string {
  const oneLine = text.replace(/\s+/g, ' ');
  return oneLine.length > MAX_CELL ? `${oneLine.slice(0, MAX_CELL - 1)}…` : oneLine;
}

/** A duration in the largest unit that divides it: `90m`, `36h`, `1500ms`. */
export function formatDuration(ms: number): string {
  for (const [unit, unitMs] of DURATION_UNITS) {
    if (ms % unitMs === 0) return `${ms / unitMs}${unit}`;
  }
  return `${ms}ms`;
}

/** `2026-11-24T09:00:00.000Z` → `2026-11-24 09:00 UTC`, with seconds when there are any. */
export function toUtcTime(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const text = date.toISOString();
  const seconds = text.slice(17, 19);
  return `${text.slice(0, 10)} ${text.slice(11, 16)}${seconds === '00' ? '' : `:${seconds}`} UTC`;
}

/**
 * A schedule in a few words, as the server's approvals show it: `every 5m`, `at 2026-11-24 09:00 UTC`,
 * `cron "0 9 * * 1-5" (Europe/Berlin)`.
 */
export function describeCronSchedule(schedule: CronSchedule): string {
  switch (schedule.kind) {
    case 'at':
      return `at ${toUtcTime(schedule.at)}`;
    case 'every':
      return `every ${formatDuration(schedule.everyMs)}`;
    case 'cron':
      return `cron "${schedule.expression}" (${schedule.timezone})`;
  }
}

/** `session s_…` or `new` (a new session per run). */
export function describeCronTarget(job: Pick<CronJob, 'target'>): string {
  return job.target.type === 'new' ? 'new' : job.target.sessionId;
}

function lastRunCell(job: CronJob): string {
  const last = job.lastRun;
  if (last === undefined) return '—';
  const reason = last.reason === undefined ? '' : `: ${cut(last.reason)}`;
  return `${toUtcTime(last.at)} ${last.outcome}${reason}`;
}

function onAskCell(job: CronJob): string {
  return job.onAsk === 'wait' ? `wait ${formatDuration(job.onAskWaitMs ?? DEFAULT_ON_ASK_WAIT_MS)}` : job.onAsk;
}

/**
 * A worker's cron jobs as a table: id, name, schedule, next run, last run (time, outcome, reason),
 * runs (of the most), where runs go (a session id or `new`), the on-ask policy and whether it is
 * paused; `—` for a job with no next or last run.
 */
export function formatCronJobs(jobs: readonly CronJob[], options: { workerName: string }): string {
  if (jobs.length === 0) {
    return `no cron jobs on worker ${options.workerName} (\`molf cron add\` makes one)\n`;
  }
  return formatTable([
    ['ID', 'NAME', 'SCHEDULE', 'NEXT RUN', 'LAST RUN', 'RUNS', 'TARGET', 'ON ASK', 'PAUSED'],
    ...jobs.map((job) => [
      job.jobId,
      cut(job.name),
      describeCronSchedule(job.schedule),
      job.nextRunAt === undefined ? '—' : toUtcTime(job.nextRunAt),
      lastRunCell(job),
      job.maxRuns === undefined ? String(job.runs) : `${job.runs}/${job.maxRuns}`,
      describeCronTarget(job),
      onAskCell(job),
      job.enabled ? 'no' : 'yes',
    ]),
  ]);
}

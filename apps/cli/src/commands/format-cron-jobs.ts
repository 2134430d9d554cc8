import {
  type CronJob,
  DEFAULT_CRON_ON_ASK_WAIT_MS,
  describeCronSchedule,
  formatCronDuration,
  formatUtcTime,
} from '@molf/protocol';
import { formatTable } from './format-table.ts';

/** Longest name and reason cell; `--json` has them whole. */
const MAX_CELL = 48;

function cut(text: string): string {
  const oneLine = text.replace(/\s+/g, ' ');
  return oneLine.length > MAX_CELL ? `${oneLine.slice(0, MAX_CELL - 1)}…` : oneLine;
}

/** `session s_…` or `new` (a new session per run). */
export function describeCronTarget(job: Pick<CronJob, 'target'>): string {
  return job.target.type === 'new' ? 'new' : job.target.sessionId;
}

function lastRunCell(job: CronJob): string {
  const last = job.lastRun;
  if (last === undefined) return '—';
  const reason = last.reason === undefined ? '' : `: ${cut(last.reason)}`;
  return `${formatUtcTime(last.at)} ${last.outcome}${reason}`;
}

function onAskCell(job: CronJob): string {
  return job.onAsk === 'wait'
    ? `wait ${formatCronDuration(job.onAskWaitMs ?? DEFAULT_CRON_ON_ASK_WAIT_MS)}`
    : job.onAsk;
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
      job.nextRunAt === undefined ? '—' : formatUtcTime(job.nextRunAt),
      lastRunCell(job),
      job.maxRuns === undefined ? String(job.runs) : `${job.runs}/${job.maxRuns}`,
      describeCronTarget(job),
      onAskCell(job),
      job.enabled ? 'no' : 'yes',
    ]),
  ]);
}

import type { Logger } from '@molf/logging';
import {
  type CronAddInput,
  type CronCreator,
  type CronEvent,
  type CronJob,
  type CronTarget,
  type CronUpdateInput,
  DEFAULT_MIN_CRON_INTERVAL_MS,
  MolfError,
} from '@molf/protocol';
import { type CronFieldContext, newCronJob, nextRunOf, updatedCronJob } from './cron-job-fields.ts';
import type { CronJobStore } from './cron-job-store.ts';
import { dueAfterDowntime } from './cron-schedule.ts';

/** The time and the one timer the scheduler uses: tests give their own and move it. */
export type CronClock = {
  now(): number;
  /** Calls `callback` once after `delayMs`; the returned function cancels it. */
  setTimer(callback: () => void, delayMs: number): () => void;
};

export const systemClock: CronClock = {
  now: () => Date.now(),
  setTimer(callback, delayMs) {
    const timer = setTimeout(callback, delayMs);
    timer.unref();
    return () => clearTimeout(timer);
  },
};

/** How one run went, as the firing says (it never throws). */
export type CronFireResult =
  | { outcome: 'started' | 'queued'; sessionId: string; messageId: string }
  | {
      outcome: 'failed';
      reason: string;
      /** Worth trying again later (the worker offline, the queue full); false: the slot is given up. */
      retry: boolean;
      sessionId?: string;
    }
  /** Nothing to do: no turn was started (a heartbeat without a checklist). */
  | { outcome: 'skipped'; reason: string };

/**
 * Sends a job's prompt into its target session for the slot `scheduledFor`. `report` tells the
 * people what a run found worth saying (a heartbeat's answer), later, when its turn answers.
 */
export type CronFire = (
  job: CronJob,
  scheduledFor: Date,
  context: { report: (report: { sessionId: string; text: string }) => void },
) => Promise<CronFireResult>;

/** The first retry waits this long, each next one twice as long, up to `MAX_BACKOFF_MS`. */
export const FIRST_BACKOFF_MS = 30_000;
export const MAX_BACKOFF_MS = 3_600_000;
/**
 * The timer never waits longer than this: a wall clock moved (by hand, NTP, a laptop waking) is
 * noticed within a minute, and due jobs run once, not once per slot slept through.
 */
export const MAX_TIMER_MS = 60_000;
/** Runs started at once when many jobs are due in the same second. */
const PARALLEL_RUNS = 32;

export function backoffMs(consecutiveFailures: number): number {
  return Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** Math.max(0, consecutiveFailures - 1));
}

export type CronScheduler = {
  /** A new job; `defaultTarget` is where its runs go without `session`. */
  add(
    input: CronAddInput,
    options: { createdBy: CronCreator; defaultTarget: CronTarget; heartbeat?: boolean },
  ): Promise<CronJob>;
  update(change: CronUpdateInput): Promise<CronJob>;
  remove(jobId: string): Promise<boolean>;
  list(filter?: { workerId?: string | undefined }): CronJob[];
  get(jobId: string): CronJob | undefined;
  /** Runs the job once now, outside its schedule (its next slot stays). */
  runNow(jobId: string): Promise<CronJob>;
  /** `cron.fired` and `cron.failed`; the listener must not throw. */
  subscribe(listener: (event: CronEvent) => void): () => void;
  /** Stops the timer and waits for the runs being fired. */
  close(): Promise<void>;
};

export type CronSchedulerOptions = {
  store: CronJobStore;
  fire: CronFire;
  logger: Logger;
  clock?: CronClock;
  /** The zone of cron expressions written without one. Default: the server's. */
  defaultTimezone?: string;
  /** The shortest interval. Default 1 minute. */
  minIntervalMs?: number;
  /** Checked before a job is stored: its worker and target session exist (throws `invalid_input`). */
  checkJob?: (job: CronJob) => Promise<void>;
};

/**
 * Runs the stored jobs on time with one timer aimed at the earliest: each due job's prompt is
 * fired into its session; a failure is retried with a doubling wait (30 s up to 1 h); slots missed
 * while the server was down run once (`missed: run_once`) or are skipped. A job is stored after
 * every change, so a restart loses no run's record.
 */
export async function startCronScheduler(options: CronSchedulerOptions): Promise<CronScheduler> {
  const { store, fire, logger } = options;
  const clock = options.clock ?? systemClock;
  const defaultTimezone = options.defaultTimezone ?? Intl.DateTimeFormat().resolvedOptions().timeZone;
  const minIntervalMs = options.minIntervalMs ?? DEFAULT_MIN_CRON_INTERVAL_MS;
  const listeners = new Set<(event: CronEvent) => void>();
  /** Jobs being fired now: a job never runs twice at once. */
  const firing = new Map<string, Promise<void>>();
  let cancelTimer: (() => void) | undefined;
  let closed = false;

  const fieldContext = (): CronFieldContext => ({ now: new Date(clock.now()), defaultTimezone, minIntervalMs });

  function emit(event: CronEvent): void {
    for (const listener of listeners) {
      try {
        listener(event);
      } catch (error) {
        logger.error({ err: error }, 'cron event listener failed');
      }
    }
  }

  function known(jobId: string): CronJob {
    const job = store.get(jobId);
    if (job === undefined) throw new MolfError('job_not_found', `no cron job ${jobId}`, { field: 'jobId' });
    return job;
  }

  /** Aims the one timer at the earliest next run (a minute at most). */
  function arm(): void {
    cancelTimer?.();
    cancelTimer = undefined;
    if (closed) return;
    let earliest = Number.POSITIVE_INFINITY;
    for (const job of store.list()) {
      if (job.enabled && job.nextRunAt !== undefined && !firing.has(job.jobId)) {
        earliest = Math.min(earliest, Date.parse(job.nextRunAt));
      }
    }
    if (earliest === Number.POSITIVE_INFINITY) return;
    const delay = Math.min(MAX_TIMER_MS, Math.max(0, earliest - clock.now()));
    cancelTimer = clock.setTimer(() => void tick(), delay);
  }

  async function tick(): Promise<void> {
    cancelTimer = undefined;
    const now = clock.now();
    const due = store
      .list()
      .filter(
        (job) =>
          job.enabled && job.nextRunAt !== undefined && Date.parse(job.nextRunAt) <= now && !firing.has(job.jobId),
      )
      .sort((a, b) => Date.parse(a.nextRunAt as string) - Date.parse(b.nextRunAt as string));
    // At most PARALLEL_RUNS at once, each next one started as soon as one is done: a thousand jobs
    // due in the same second neither wait in one line nor all start at once.
    // A lane goes on once a prompt is sent; the runs are recorded meanwhile (the store writes them
    // together), and the timer is aimed again once all are.
    let next = 0;
    const recorded: Promise<void>[] = [];
    const lane = async () => {
      while (next < due.length && !closed) {
        const job = due[next] as CronJob;
        next += 1;
        const run = runDue(job.jobId);
        recorded.push(run.recorded);
        await run.fired;
      }
    };
    await Promise.all(Array.from({ length: Math.min(PARALLEL_RUNS, due.length) }, lane));
    await Promise.all(recorded);
    arm();
  }

  /** Fires a due job for its slot and records how it went: `fired` once its prompt is sent, `recorded` once stored. */
  function runDue(jobId: string): { fired: Promise<void>; recorded: Promise<void> } {
    const job = store.get(jobId);
    if (job?.nextRunAt === undefined) return { fired: Promise.resolve(), recorded: Promise.resolve() };
    // A retry is for the slot that failed, not for the time it is tried again.
    const slot = job.retrySlot ?? job.nextRunAt;
    let onFired = () => {};
    const fired = new Promise<void>((resolve) => {
      onFired = resolve;
    });
    const recorded = track(jobId, fireAndRecord(job, new Date(slot), { scheduled: true, onFired })).finally(onFired);
    return { fired, recorded };
  }

  function track(jobId: string, run: Promise<void>): Promise<void> {
    const tracked = run
      .catch((error: unknown) => logger.error({ err: error, jobId }, 'recording a cron run failed'))
      .finally(() => firing.delete(jobId));
    firing.set(jobId, tracked);
    return tracked;
  }

  async function fireAndRecord(
    job: CronJob,
    scheduledFor: Date,
    how: { scheduled: boolean; onFired?: () => void },
  ): Promise<void> {
    const report = ({ sessionId, text }: { sessionId: string; text: string }) =>
      emit({
        type: 'cron.reported',
        jobId: job.jobId,
        workerId: job.workerId,
        name: job.name,
        sessionId,
        text,
        at: new Date(clock.now()).toISOString(),
      });
    const result = await fire(job, scheduledFor, { report }).catch(
      (error: unknown): CronFireResult => ({ outcome: 'failed', reason: (error as Error).message, retry: true }),
    );
    how.onFired?.();
    const nowMs = clock.now();
    const at = new Date(nowMs).toISOString();
    // The job may have changed or gone while its prompt was sent.
    const current = store.get(job.jobId);
    if (current === undefined) return;
    const lastRun = {
      at,
      scheduledFor: scheduledFor.toISOString(),
      outcome: result.outcome,
      ...(result.outcome === 'failed' || result.outcome === 'skipped' ? { reason: result.reason } : {}),
      ...('sessionId' in result && result.sessionId !== undefined ? { sessionId: result.sessionId } : {}),
      ...(result.outcome === 'started' || result.outcome === 'queued' ? { messageId: result.messageId } : {}),
    };
    if (result.outcome === 'skipped') {
      // Not a run: nothing counted, the failure streak ended, on to the next slot.
      const skipped = { ...current, consecutiveFailures: how.scheduled ? 0 : current.consecutiveFailures, lastRun };
      const nextRunAt = how.scheduled
        ? nextRunOf(skipped, new Date(Math.max(nowMs, scheduledFor.getTime())))
        : current.nextRunAt;
      await store.put(how.scheduled ? withoutRetry(withNextRun(skipped, nextRunAt)) : withNextRun(skipped, nextRunAt));
      return;
    }
    let next: CronJob;
    let event: CronEvent;
    if (result.outcome !== 'failed') {
      const ran = {
        ...current,
        runs: current.runs + 1,
        consecutiveFailures: how.scheduled ? 0 : current.consecutiveFailures,
        lastRun,
      };
      // A scheduled run moves on from the later of its slot and now: a late run is not repeated.
      // A run on request counts towards `maxRuns` too: with the last one used, the slot it kept is dropped.
      const nextRunAt = how.scheduled
        ? nextRunOf(ran, new Date(Math.max(nowMs, scheduledFor.getTime())))
        : ran.maxRuns !== undefined && ran.runs >= ran.maxRuns
          ? undefined
          : current.nextRunAt;
      next = how.scheduled ? withoutRetry(withNextRun(ran, nextRunAt)) : withNextRun(ran, nextRunAt);
      event = {
        type: 'cron.fired',
        jobId: job.jobId,
        workerId: job.workerId,
        name: job.name,
        scheduledFor: lastRun.scheduledFor,
        sessionId: result.sessionId,
        messageId: result.messageId,
        queued: result.outcome === 'queued',
        at,
      };
    } else {
      // A run by hand that fails says nothing of the schedule's streak.
      const failures = how.scheduled ? current.consecutiveFailures + 1 : current.consecutiveFailures;
      const failed = { ...current, consecutiveFailures: failures, lastRun };
      // A slot worth retrying keeps its place until it runs; one given up moves on.
      const retryAt = new Date(nowMs + backoffMs(failures)).toISOString();
      const retrying =
        how.scheduled && result.retry && current.enabled && (current.until === undefined || retryAt <= current.until);
      if (!how.scheduled) next = withNextRun(failed, current.nextRunAt);
      else if (retrying) next = { ...withNextRun(failed, retryAt), retrySlot: scheduledFor.toISOString() };
      else
        next = withoutRetry(withNextRun(failed, nextRunOf(failed, new Date(Math.max(nowMs, scheduledFor.getTime())))));
      event = {
        type: 'cron.failed',
        jobId: job.jobId,
        workerId: job.workerId,
        name: job.name,
        scheduledFor: lastRun.scheduledFor,
        reason: result.reason,
        ...(retrying ? { retryAt } : {}),
        at,
      };
      logger.warn({ jobId: job.jobId, reason: result.reason, retryAt: next.nextRunAt }, 'cron run failed');
    }
    // Stored first: a client told of the run reads the job as it now is.
    await store.put(next);
    emit(event);
  }

  function withoutRetry(job: CronJob): CronJob {
    const { retrySlot: _slot, ...rest } = job;
    return rest;
  }

  function withNextRun(job: CronJob, nextRunAt: string | undefined): CronJob {
    const { nextRunAt: _old, ...rest } = job;
    return nextRunAt === undefined ? rest : { ...rest, nextRunAt };
  }

  /**
   * After a stop: each job whose next run passed runs once now, as its latest missed slot
   * (`run_once`, and an `at` job always), or moves on to its next slot (`skip`). A retry that was
   * waiting keeps its (past) time: it runs at the first tick.
   */
  async function catchUp(): Promise<void> {
    const now = new Date(clock.now());
    for (const job of store.list()) {
      if (!job.enabled || job.nextRunAt === undefined || Date.parse(job.nextRunAt) > now.getTime()) continue;
      if (job.retrySlot !== undefined) continue;
      // Slots after `until` are not the job's: the run owed is for the latest slot before it.
      const untilMs = job.until === undefined ? Number.POSITIVE_INFINITY : Date.parse(job.until);
      const { runNow } = dueAfterDowntime(job.schedule, {
        lastSlot: new Date(Date.parse(job.nextRunAt) - 1),
        now: new Date(Math.min(now.getTime(), untilMs)),
        policy: job.missed,
      });
      const nextRunAt = runNow?.toISOString() ?? nextRunOf(job, now);
      if (runNow === undefined) {
        logger.info(
          { jobId: job.jobId, missed: job.nextRunAt, nextRunAt },
          'cron slots missed while stopped are skipped',
        );
      }
      if (nextRunAt !== job.nextRunAt) await store.put(withNextRun(job, nextRunAt));
    }
  }

  await catchUp();
  arm();

  return {
    async add(input, { createdBy, defaultTarget, heartbeat }) {
      const job = newCronJob(input, {
        ...fieldContext(),
        createdBy,
        defaultTarget,
        ...(heartbeat === true ? { heartbeat } : {}),
      });
      await options.checkJob?.(job);
      await store.add(job);
      arm();
      return job;
    },

    async update(change) {
      const job = updatedCronJob(known(change.jobId), change, fieldContext());
      await options.checkJob?.(job);
      await store.put(job);
      arm();
      return job;
    },

    async remove(jobId) {
      const removed = await store.remove(jobId);
      arm();
      return removed;
    },

    list: (filter = {}) => store.list(filter.workerId === undefined ? {} : { workerId: filter.workerId }),

    get: (jobId) => store.get(jobId),

    async runNow(jobId) {
      const job = known(jobId);
      const running = firing.get(jobId);
      if (running !== undefined) await running;
      await track(jobId, fireAndRecord(job, new Date(clock.now()), { scheduled: false }));
      arm();
      return known(jobId);
    },

    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },

    async close() {
      closed = true;
      cancelTimer?.();
      cancelTimer = undefined;
      await Promise.all([...firing.values()]);
    },
  };
}

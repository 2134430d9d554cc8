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
import { backoffMs, recordRun, withNextRun } from './record-cron-run.ts';

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

/**
 * The timer never waits longer than this: a wall clock moved (by hand, NTP, a laptop waking) is
 * noticed within a minute, and due jobs run once, not once per slot slept through.
 */
export const MAX_TIMER_MS = 60_000;
/** Runs started at once when many jobs are due in the same second. */
const PARALLEL_RUNS = 32;

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
  /** `cron.fired`, `cron.failed` and `cron.reported`; the listener must not throw. */
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
  /**
   * With several servers on one database: claims a scheduled run (job, slot) for this server; the
   * others skip it. Default: every run is this server's.
   */
  claimSlot?: (jobId: string, slot: string) => Promise<{ claimed: boolean; fired?: CronFireResult }>;
  /**
   * With `claimSlot`: stores how this server's claimed run fired, once its prompt is stored and before
   * the run is recorded. A server that takes the slot over (this one died in between) gets it as
   * `fired` and records the run instead of firing it again.
   */
  slotFired?: (jobId: string, slot: string, fired: CronFireResult) => Promise<void>;
};

/** How long a run another server claimed is left to it before this one looks again (it may have died). */
const CLAIMED_ELSEWHERE_MS = 2 * 60_000;

/**
 * Runs the stored jobs on time with one timer aimed at the earliest: each due job's prompt is
 * fired into its session; a failure is retried with a doubling wait (30 s up to 1 h); slots missed
 * while the server was down run once (`missed: run_once`) or are skipped. A job is stored after
 * every change, so a restart loses no run's record; a job changed elsewhere (another server on the
 * database) is aimed at as soon as the store reads it.
 */
export async function startCronScheduler(options: CronSchedulerOptions): Promise<CronScheduler> {
  const { store, fire, logger } = options;
  const clock = options.clock ?? systemClock;
  const defaultTimezone = options.defaultTimezone ?? Intl.DateTimeFormat().resolvedOptions().timeZone;
  const minIntervalMs = options.minIntervalMs ?? DEFAULT_MIN_CRON_INTERVAL_MS;
  const listeners = new Set<(event: CronEvent) => void>();
  /** Jobs being fired now: a job never runs twice at once. */
  const firing = new Map<string, Promise<void>>();
  /**
   * Jobs not to fire before a time (ms): a run whose record could not be stored (the disk full, a
   * job the schedule code cannot read) is not fired again at once, but after a doubling wait.
   */
  const held = new Map<string, { until: number; failures: number }>();
  let cancelTimer: (() => void) | undefined;
  let closed = false;
  /** Runs another server claimed, by job: its slot, until its record arrives here (the job moves on). */
  const claimedElsewhere = new Map<string, { slot: string; until: number }>();
  const leftToOthers = (job: CronJob) => {
    const claim = claimedElsewhere.get(job.jobId);
    if (claim === undefined) return false;
    if (claim.slot === (job.retrySlot ?? job.nextRunAt) && claim.until > clock.now()) return true;
    claimedElsewhere.delete(job.jobId);
    return false;
  };

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
      if (!job.enabled || job.nextRunAt === undefined || firing.has(job.jobId)) continue;
      // A run left to the server that claimed it is looked at again when its wait ends: that server
      // may have died before recording it, and nothing else would wake this one for it.
      const claim = leftToOthers(job) ? claimedElsewhere.get(job.jobId) : undefined;
      const at = claim?.until ?? Math.max(Date.parse(job.nextRunAt), held.get(job.jobId)?.until ?? 0);
      earliest = Math.min(earliest, at);
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
          job.enabled &&
          job.nextRunAt !== undefined &&
          Date.parse(job.nextRunAt) <= now &&
          (held.get(job.jobId)?.until ?? 0) <= now &&
          !firing.has(job.jobId) &&
          !leftToOthers(job),
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
      .then(
        () => {
          held.delete(jobId);
        },
        (error: unknown) => hold(jobId, error),
      )
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
    const slot = scheduledFor.toISOString();
    let firedBefore: CronFireResult | undefined;
    if (how.scheduled && options.claimSlot !== undefined) {
      const claim = await options.claimSlot(job.jobId, slot).catch((error: unknown) => {
        logger.warn({ err: error, jobId: job.jobId }, 'cannot claim a cron run; it is left for now');
        return { claimed: false, fired: undefined };
      });
      firedBefore = claim.fired;
      if (!claim.claimed) {
        // Another server fires this run and records it; its record reaches this one's store.
        claimedElsewhere.set(job.jobId, { slot, until: clock.now() + CLAIMED_ELSEWHERE_MS });
        how.onFired?.();
        return;
      }
    }
    if (firedBefore !== undefined) {
      logger.warn(
        { jobId: job.jobId, slot },
        'a cron run fired by a server that stopped before recording it: recorded here, not fired again',
      );
    }
    const result =
      firedBefore ??
      (await fire(job, scheduledFor, { report }).catch(
        (error: unknown): CronFireResult => ({ outcome: 'failed', reason: (error as Error).message, retry: true }),
      ));
    how.onFired?.();
    // Only a stored prompt counts as fired: a failed run is tried again, by this server or another.
    const prompted = result.outcome === 'started' || result.outcome === 'queued';
    if (firedBefore === undefined && prompted && how.scheduled && options.slotFired !== undefined) {
      await options.slotFired(job.jobId, slot, result).catch((error: unknown) => {
        logger.warn({ err: error, jobId: job.jobId }, 'cannot store that a cron run fired');
      });
    }
    const nowMs = clock.now();
    let event: CronEvent | undefined;
    // Recorded on the job as it is when written: a change made meanwhile (paused, renamed) stays.
    await store.modify(job.jobId, (current) => {
      const recorded = recordRun(current, result, { scheduledFor, nowMs, scheduled: how.scheduled });
      event = recorded.event;
      return recorded.job;
    });
    if (result.outcome === 'failed') {
      logger.warn({ jobId: job.jobId, reason: result.reason }, 'cron run failed');
    }
    // Stored first: a client told of the run reads the job as it now is.
    if (event !== undefined) emit(event);
  }

  /** A job whose run could not be recorded waits, 30 s doubling to 1 h, instead of firing again at once. */
  function hold(jobId: string, error: unknown): void {
    const failures = (held.get(jobId)?.failures ?? 0) + 1;
    const until = clock.now() + backoffMs(failures);
    held.set(jobId, { until, failures });
    logger.error(
      { err: error, jobId, path: store.path, retryAt: new Date(until).toISOString() },
      'recording a cron run failed; the job waits before it fires again',
    );
  }

  /**
   * After a stop: each job whose next run passed runs once now, as its latest missed slot
   * (`run_once`, and an `at` job always), or moves on to its next slot (`skip`). A retry that was
   * waiting keeps its (past) time: it runs at the first tick.
   */
  async function catchUp(): Promise<void> {
    const now = new Date(clock.now());
    for (const job of store.list()) {
      try {
        await catchUpJob(job, now);
      } catch (error) {
        // One job the schedule code cannot read must not stop the server: it is held, and named.
        held.set(job.jobId, { until: Number.POSITIVE_INFINITY, failures: 1 });
        logger.error(
          { err: error, jobId: job.jobId, path: store.path },
          'a cron job cannot be scheduled; it is not run',
        );
      }
    }
  }

  async function catchUpJob(job: CronJob, now: Date): Promise<void> {
    if (!job.enabled || job.nextRunAt === undefined || Date.parse(job.nextRunAt) > now.getTime()) return;
    if (job.retrySlot !== undefined) return;
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

  await catchUp();
  arm();
  // Jobs added, changed or removed by another server on the database (or in the file by hand).
  const stopFollowing = store.subscribe(() => arm());

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
      await options.checkJob?.(updatedCronJob(known(change.jobId), change, fieldContext()));
      // Applied to the job as it is when written: a run recorded meanwhile is kept.
      const job = await store.modify(change.jobId, (current) => updatedCronJob(current, change, fieldContext()));
      if (job === undefined) throw new MolfError('job_not_found', `no cron job ${change.jobId}`, { field: 'jobId' });
      held.delete(change.jobId);
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
      known(jobId);
      // One run of a job at a time: wait for the one being fired, then read the job again (it may
      // have changed, or gone).
      for (let running = firing.get(jobId); running !== undefined; running = firing.get(jobId)) await running;
      const job = known(jobId);
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
      stopFollowing();
      cancelTimer?.();
      cancelTimer = undefined;
      await Promise.all([...firing.values()]);
    },
  };
}

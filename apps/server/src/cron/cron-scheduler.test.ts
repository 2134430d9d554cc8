import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createSilentLogger } from '@molf/logging';
import { type CronAddInput, type CronEvent, type CronJob, MolfError, type WorkerId } from '@molf/protocol';
import { describe, expect, it } from 'vitest';
import { openFileStateDocuments } from '../state/index.ts';
import { createFakeClock, createFakeFire, type FakeClock, type FakeFire, until } from '../testing/cron-fakes.ts';
import { backendTitle, stateBackends } from '../testing/state-backends.ts';
import { createTempDir } from '../testing/test-link.ts';
import { type CronJobStore, openCronJobStore } from './cron-job-store.ts';
import { type CronFireResult, type CronScheduler, MAX_TIMER_MS, startCronScheduler } from './cron-scheduler.ts';

// The scheduler against a clock the test moves: no real minutes pass and no fake timers are
// installed. Time moves from timer to timer, each tick is let finish before the next, so a test
// reads like a day in the life of the jobs.

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
/** A Monday, 10:00 UTC. */
const START = '2026-03-02T10:00:00.000Z';
const T0 = Date.parse(START);
const WORKER = randomUUID() as WorkerId;
/** A job id nobody made. */
const UNKNOWN_JOB = 'cj_0123456789abcdef';

const iso = (ms: number) => new Date(ms).toISOString();

function createDeferred<T>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}

type AddFields = Omit<CronAddInput, 'workerId' | 'prompt'> & Partial<Pick<CronAddInput, 'workerId' | 'prompt'>>;

type Harness = AsyncDisposable & {
  clock: FakeClock;
  fire: FakeFire;
  /** Every event of every scheduler started so far. */
  events: CronEvent[];
  jobsPath: () => string;
  scheduler: () => CronScheduler;
  add(fields: AddFields): Promise<CronJob>;
  /** The stored job (throws when it is gone). */
  job(jobId: string): CronJob;
  /** Lets `ms` pass: each timer runs at its time and its tick finishes before time moves on. */
  run(ms: number): Promise<void>;
  /** Moves the clock by `ms` at once (a sleeping laptop, a clock set by hand), then lets the tick finish. */
  jump(ms: number): Promise<void>;
  /** Closes the scheduler and its store, as a server stopping. */
  stop(): Promise<void>;
  /** Opens the store again and starts a new scheduler on it. */
  start(): Promise<void>;
  /** While true, recording a run fails as a full disk would. */
  failRecords(failing: boolean): void;
};

async function startHarness(
  options: { start?: string; checkJob?: (job: CronJob) => Promise<void> } = {},
): Promise<Harness> {
  const dir = await createTempDir();
  const clock = createFakeClock(options.start ?? START);
  const fire = createFakeFire(clock);
  const events: CronEvent[] = [];
  let store: CronJobStore | undefined;
  let scheduler: CronScheduler | undefined;

  let failingRecords = false;
  async function start(): Promise<void> {
    const opened = await openCronJobStore({ documents: openFileStateDocuments({ dataDir: dir.path }) });
    const modify = opened.modify.bind(opened);
    opened.modify = (jobId, change) =>
      failingRecords ? Promise.reject(new Error('ENOSPC: no space left on device')) : modify(jobId, change);
    store = opened;
    scheduler = await startCronScheduler({
      store,
      fire: fire.fire,
      logger: createSilentLogger(),
      clock,
      defaultTimezone: 'UTC',
      ...(options.checkJob === undefined ? {} : { checkJob: options.checkJob }),
    });
    scheduler.subscribe((event) => events.push(event));
  }

  async function stop(): Promise<void> {
    try {
      await scheduler?.close();
    } finally {
      scheduler = undefined;
      await store?.close();
      store = undefined;
    }
  }

  const running = () => {
    if (scheduler === undefined || store === undefined) throw new Error('the scheduler is stopped');
    return { scheduler, store };
  };

  /**
   * A tick has finished when no run is being fired and the timer is aimed again (or there is
   * nothing left to aim at). A run's store write keeps the job due in the store until it lands.
   */
  const idle = () =>
    fire.inFlight === 0 &&
    (clock.pendingTimers() > 0 ||
      !running()
        .store.list()
        .some((job) => job.enabled && job.nextRunAt !== undefined));

  await start();

  return {
    clock,
    fire,
    events,
    jobsPath: () => running().store.path,
    scheduler: () => running().scheduler,
    add: ({ workerId = WORKER, prompt = 'Run the tests and say what broke.', ...fields }) =>
      running().scheduler.add(
        { workerId, prompt, ...fields },
        { createdBy: { client: 'test' }, defaultTarget: { type: 'new' } },
      ),
    job(jobId) {
      const job = running().store.get(jobId);
      if (job === undefined) throw new Error(`no job ${jobId}`);
      return job;
    },
    async run(ms) {
      const target = clock.now() + ms;
      for (let steps = 0; ; steps += 1) {
        if (steps > 100_000) throw new Error('the scheduler keeps setting timers without time moving on');
        const next = clock.nextTimerAt();
        if (next === undefined || next > target) break;
        clock.advance(Math.max(0, next - clock.now()));
        await until(idle, 'the tick to finish');
      }
      clock.advance(target - clock.now());
    },
    async jump(ms) {
      clock.advance(ms);
      await until(idle, 'the tick to finish');
    },
    stop,
    start,
    failRecords(failing) {
      failingRecords = failing;
    },
    async [Symbol.asyncDispose]() {
      try {
        await stop();
      } finally {
        await dir[Symbol.asyncDispose]();
      }
    },
  };
}

/** The rejection of `promise`, which must be a `MolfError`. */
async function molfErrorOf(promise: Promise<unknown>): Promise<MolfError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  if (!(error instanceof MolfError)) throw new Error(`expected a MolfError, got ${String(error)}`);
  return error;
}

describe('cron scheduler', () => {
  describe('runs on schedule', () => {
    it('fires an `every 5m` job at each slot, not before, and records each run', async () => {
      await using h = await startHarness();
      const job = await h.add({ schedule: { every: '5m' } });
      expect(job.nextRunAt).toBe(iso(T0 + 5 * MINUTE));

      await h.run(5 * MINUTE - 1);
      expect(h.fire.calls).toEqual([]);
      expect(h.events).toEqual([]);

      await h.run(1);
      expect(h.fire.calls.map((call) => [call.scheduledFor, call.at])).toEqual([
        [iso(T0 + 5 * MINUTE), iso(T0 + 5 * MINUTE)],
      ]);
      expect(h.fire.calls[0]?.job.jobId).toBe(job.jobId);
      expect(h.job(job.jobId)).toMatchObject({
        runs: 1,
        consecutiveFailures: 0,
        nextRunAt: iso(T0 + 10 * MINUTE),
        lastRun: {
          at: iso(T0 + 5 * MINUTE),
          scheduledFor: iso(T0 + 5 * MINUTE),
          outcome: 'started',
          sessionId: 'ses_1',
          messageId: 'msg_1',
        },
      });
      expect(h.events).toEqual([
        {
          type: 'cron.fired',
          jobId: job.jobId,
          workerId: WORKER,
          name: job.name,
          scheduledFor: iso(T0 + 5 * MINUTE),
          sessionId: 'ses_1',
          messageId: 'msg_1',
          queued: false,
          at: iso(T0 + 5 * MINUTE),
        },
      ]);

      // The session is busy the second time: the prompt waits in its queue, which is still a run.
      h.fire.respond = () => ({ outcome: 'queued', sessionId: 'ses_busy', messageId: 'msg_queued' });
      await h.run(5 * MINUTE);
      expect(h.fire.calls.map((call) => call.scheduledFor)).toEqual([iso(T0 + 5 * MINUTE), iso(T0 + 10 * MINUTE)]);
      expect(h.job(job.jobId)).toMatchObject({
        runs: 2,
        nextRunAt: iso(T0 + 15 * MINUTE),
        lastRun: { scheduledFor: iso(T0 + 10 * MINUTE), outcome: 'queued', messageId: 'msg_queued' },
      });
      expect(h.events.at(-1)).toMatchObject({ type: 'cron.fired', queued: true, sessionId: 'ses_busy' });
    });

    it('fires an `at` job once, then keeps no next run', async () => {
      await using h = await startHarness();
      const job = await h.add({ schedule: { at: '20m' } });
      expect(job.nextRunAt).toBe(iso(T0 + 20 * MINUTE));

      await h.run(20 * MINUTE - 1);
      expect(h.fire.calls).toEqual([]);
      await h.run(1);
      expect(h.fire.calls.map((call) => call.scheduledFor)).toEqual([iso(T0 + 20 * MINUTE)]);
      const ran = h.job(job.jobId);
      expect(ran.runs).toBe(1);
      expect(ran.nextRunAt).toBeUndefined();

      await h.run(2 * 24 * HOUR);
      expect(h.fire.calls).toHaveLength(1);
      expect(h.clock.pendingTimers()).toBe(0);
    });

    it('aims a zoned cron job across a DST change and fires it at the zone’s time', async () => {
      // Friday 2026-03-27, 11:00 in Berlin; summer time begins on Sunday the 29th.
      await using h = await startHarness({ start: '2026-03-27T10:00:00.000Z' });
      const job = await h.add({ schedule: { cron: '0 9 * * 1-5', tz: 'Europe/Berlin' } });
      // Monday 09:00 CEST is 07:00 UTC (it would be 08:00 UTC before the change).
      expect(job.nextRunAt).toBe('2026-03-30T07:00:00.000Z');

      await h.run(Date.parse('2026-03-30T07:00:00.000Z') - h.clock.now() - 1);
      expect(h.fire.calls).toEqual([]);
      await h.run(1);
      expect(h.fire.calls.map((call) => call.scheduledFor)).toEqual(['2026-03-30T07:00:00.000Z']);
      expect(h.job(job.jobId).nextRunAt).toBe('2026-03-31T07:00:00.000Z');
    });

    it('fires two jobs due in the same tick', async () => {
      await using h = await startHarness();
      const first = await h.add({ schedule: { every: '5m' }, name: 'first' });
      const second = await h.add({ schedule: { every: '5m' }, name: 'second' });

      await h.run(5 * MINUTE);
      expect(h.fire.calls.map((call) => call.job.jobId).sort()).toEqual([first.jobId, second.jobId].sort());
      expect(h.fire.calls.every((call) => call.scheduledFor === iso(T0 + 5 * MINUTE))).toBe(true);
      expect(h.job(first.jobId).runs).toBe(1);
      expect(h.job(second.jobId).runs).toBe(1);
    });
  });

  describe('failures', () => {
    it('retries a failed run after 30 s, doubling up to an hour, and goes back to its schedule once it runs', async () => {
      await using h = await startHarness();
      const reason = `worker ${WORKER} is offline`;
      h.fire.respond = () => ({ outcome: 'failed', reason, retry: true });
      const job = await h.add({ schedule: { every: '5m' } });
      await h.run(5 * MINUTE);

      const waits = [30, 60, 120, 240, 480, 960, 1920, 3600, 3600].map((seconds) => seconds * 1_000);
      for (const [index, wait] of waits.entries()) {
        const failedAt = h.clock.now();
        expect(h.fire.calls).toHaveLength(index + 1);
        expect(h.job(job.jobId)).toMatchObject({
          runs: 0,
          consecutiveFailures: index + 1,
          nextRunAt: iso(failedAt + wait),
          lastRun: { at: iso(failedAt), outcome: 'failed', reason },
        });
        expect(h.events.at(-1)).toEqual({
          type: 'cron.failed',
          jobId: job.jobId,
          workerId: WORKER,
          name: job.name,
          // Every retry is for the slot that failed, not for the time it is tried again.
          scheduledFor: iso(T0 + 5 * MINUTE),
          reason,
          retryAt: iso(failedAt + wait),
          at: iso(failedAt),
        });

        await h.run(wait - 1);
        expect(h.fire.calls).toHaveLength(index + 1);
        if (index === waits.length - 1) h.fire.respond = () => ({ outcome: 'started', sessionId: 's', messageId: 'm' });
        await h.run(1);
        expect(h.fire.calls.at(-1)?.at).toBe(iso(failedAt + wait));
      }

      // The worker is back at 13:08:30: the streak ends and the job waits for its next slot, 13:10.
      expect(h.clock.now()).toBe(T0 + 3 * HOUR + 8 * MINUTE + 30_000);
      expect(h.job(job.jobId)).toMatchObject({
        runs: 1,
        consecutiveFailures: 0,
        nextRunAt: iso(T0 + 3 * HOUR + 10 * MINUTE),
        lastRun: { outcome: 'started', scheduledFor: iso(T0 + 5 * MINUTE) },
      });
      expect(h.fire.calls).toHaveLength(waits.length + 1);
      expect(h.fire.calls.every((call) => call.scheduledFor === iso(T0 + 5 * MINUTE))).toBe(true);
      expect(h.events.at(-1)).toMatchObject({ type: 'cron.fired', scheduledFor: iso(T0 + 5 * MINUTE) });
      await h.run(90_000);
      expect(h.fire.calls.at(-1)?.scheduledFor).toBe(iso(T0 + 3 * HOUR + 10 * MINUTE));
    });

    it('gives up a slot whose failure is not worth retrying and waits for the next', async () => {
      await using h = await startHarness();
      const reason = 'its session no longer exists';
      h.fire.respond = () => ({ outcome: 'failed', reason, retry: false });
      const job = await h.add({ schedule: { every: '5m' } });

      await h.run(5 * MINUTE);
      expect(h.job(job.jobId)).toMatchObject({
        consecutiveFailures: 1,
        nextRunAt: iso(T0 + 10 * MINUTE),
        lastRun: { outcome: 'failed', reason },
      });
      // Given up, not retried: the event names no retry, and the job no slot to retry.
      expect(h.events).toEqual([expect.objectContaining({ type: 'cron.failed', reason })]);
      expect(h.events[0]).not.toHaveProperty('retryAt');
      expect(h.job(job.jobId)?.retrySlot).toBeUndefined();
      await h.run(5 * MINUTE - 1);
      expect(h.fire.calls).toHaveLength(1);
      await h.run(1);
      expect(h.fire.calls.map((call) => call.scheduledFor)).toEqual([iso(T0 + 5 * MINUTE), iso(T0 + 10 * MINUTE)]);
    });
  });

  describe('the timer and the clock', () => {
    it('never aims the timer more than a minute ahead', async () => {
      await using h = await startHarness();
      const job = await h.add({ schedule: { every: '1h' } });
      expect(h.clock.delays).toEqual([MAX_TIMER_MS]);

      await h.run(HOUR);
      expect(h.fire.calls.map((call) => call.scheduledFor)).toEqual([iso(T0 + HOUR)]);
      expect(h.job(job.jobId).nextRunAt).toBe(iso(T0 + 2 * HOUR));
      expect(h.clock.delays.length).toBeGreaterThanOrEqual(60);
      expect(Math.max(...h.clock.delays)).toBe(MAX_TIMER_MS);
    });

    it('fires a job once after the clock jumps ten hours, then goes on from the new time', async () => {
      await using h = await startHarness();
      const job = await h.add({ schedule: { every: '5m' } });

      await h.jump(10 * HOUR + 2 * MINUTE);
      expect(h.fire.calls).toHaveLength(1);
      expect(h.fire.calls[0]?.at).toBe(iso(T0 + 10 * HOUR + 2 * MINUTE));
      expect(Date.parse(h.fire.calls[0]?.scheduledFor ?? '')).toBeLessThanOrEqual(h.clock.now());
      expect(h.job(job.jobId)).toMatchObject({ runs: 1, nextRunAt: iso(T0 + 10 * HOUR + 5 * MINUTE) });

      await h.run(3 * MINUTE);
      expect(h.fire.calls.map((call) => call.scheduledFor).slice(1)).toEqual([iso(T0 + 10 * HOUR + 5 * MINUTE)]);
      expect(h.job(job.jobId).runs).toBe(2);
    });
  });

  describe('after a restart', () => {
    /** Stops at 10:01, starts again at 13:45 (the clock moving while nothing runs), and lets the first tick run. */
    async function downFrom1001To1345(h: Harness): Promise<void> {
      await h.run(MINUTE);
      await h.stop();
      h.clock.advance(3 * HOUR + 44 * MINUTE);
      await h.start();
      await h.run(0);
    }

    it('fires an `at` job missed while stopped once', async () => {
      await using h = await startHarness();
      const job = await h.add({ schedule: { at: '20m' } });

      await downFrom1001To1345(h);
      expect(h.fire.calls.map((call) => [call.scheduledFor, call.at])).toEqual([
        [iso(T0 + 20 * MINUTE), iso(T0 + 3 * HOUR + 45 * MINUTE)],
      ]);
      expect(h.job(job.jobId).nextRunAt).toBeUndefined();
      await h.run(HOUR);
      expect(h.fire.calls).toHaveLength(1);
    });

    const recurring = [
      { what: 'an `every` job', schedule: { every: '1h' }, latestMissed: '13:00', next: '14:00' },
      { what: 'a `cron` job', schedule: { cron: '30 * * * *', tz: 'UTC' }, latestMissed: '13:30', next: '14:30' },
    ];
    const onStartDay = (time: string) => `2026-03-02T${time}:00.000Z`;

    it.each(recurring)('fires $what once for its latest missed slot, then on schedule (run_once)', async (row) => {
      await using h = await startHarness();
      const job = await h.add({ schedule: row.schedule, missed: 'run_once' });

      await downFrom1001To1345(h);
      expect(h.fire.calls.map((call) => call.scheduledFor)).toEqual([onStartDay(row.latestMissed)]);
      expect(h.job(job.jobId)).toMatchObject({ runs: 1, nextRunAt: onStartDay(row.next) });

      await h.run(Date.parse(onStartDay(row.next)) - h.clock.now());
      expect(h.fire.calls.map((call) => call.scheduledFor)).toEqual([
        onStartDay(row.latestMissed),
        onStartDay(row.next),
      ]);
    });

    it.each(recurring)('skips the slots $what missed while stopped and waits for the next (skip)', async (row) => {
      await using h = await startHarness();
      const job = await h.add({ schedule: row.schedule, missed: 'skip' });

      await downFrom1001To1345(h);
      expect(h.fire.calls).toEqual([]);
      expect(h.job(job.jobId)).toMatchObject({ runs: 0, nextRunAt: onStartDay(row.next) });

      await h.run(Date.parse(onStartDay(row.next)) - h.clock.now());
      expect(h.fire.calls.map((call) => call.scheduledFor)).toEqual([onStartDay(row.next)]);
    });

    it('follows the missed policy for a job whose last slot was given up before the stop', async () => {
      await using h = await startHarness();
      h.fire.respond = () => ({ outcome: 'failed', reason: 'its session no longer exists', retry: false });
      const job = await h.add({ schedule: { every: '5m' }, missed: 'skip' });
      await h.run(6 * MINUTE);
      expect(h.job(job.jobId)).toMatchObject({ consecutiveFailures: 1, nextRunAt: iso(T0 + 10 * MINUTE) });

      await h.stop();
      h.clock.advance(3 * HOUR);
      await h.start();
      await h.run(0);
      expect(h.fire.calls).toHaveLength(1);
      expect(h.job(job.jobId).nextRunAt).toBe(iso(T0 + 3 * HOUR + 10 * MINUTE));
    });

    it('catches up a job whose `until` passed while stopped with its last slot before `until`, then stops', async () => {
      await using h = await startHarness();
      const job = await h.add({ schedule: { every: '5m' }, until: '30m', missed: 'run_once' });
      expect(job.until).toBe(iso(T0 + 30 * MINUTE));

      await h.run(7 * MINUTE);
      expect(h.fire.calls).toHaveLength(1);
      await h.stop();
      h.clock.advance(2 * HOUR);
      await h.start();
      await h.run(0);

      expect(h.fire.calls.map((call) => call.scheduledFor)).toEqual([iso(T0 + 5 * MINUTE), iso(T0 + 30 * MINUTE)]);
      expect(h.job(job.jobId).nextRunAt).toBeUndefined();
      await h.run(HOUR);
      expect(h.fire.calls).toHaveLength(2);
    });
  });

  describe('limits', () => {
    it('stops after `maxRuns` runs', async () => {
      await using h = await startHarness();
      const job = await h.add({ schedule: { every: '5m' }, maxRuns: 2 });

      await h.run(10 * MINUTE);
      expect(h.fire.calls).toHaveLength(2);
      expect(h.job(job.jobId)).toMatchObject({ runs: 2 });
      expect(h.job(job.jobId).nextRunAt).toBeUndefined();
      await h.run(HOUR);
      expect(h.fire.calls).toHaveLength(2);
    });

    it('runs no slot after `until`', async () => {
      await using h = await startHarness();
      const job = await h.add({ schedule: { every: '5m' }, until: '17m' });

      await h.run(HOUR);
      expect(h.fire.calls.map((call) => call.scheduledFor)).toEqual([
        iso(T0 + 5 * MINUTE),
        iso(T0 + 10 * MINUTE),
        iso(T0 + 15 * MINUTE),
      ]);
      expect(h.job(job.jobId).nextRunAt).toBeUndefined();
    });
  });

  describe('changes', () => {
    it('fires nothing while a job is disabled, and aims from now when it is enabled again', async () => {
      await using h = await startHarness();
      const job = await h.add({ schedule: { every: '5m' } });

      const disabled = await h.scheduler().update({ jobId: job.jobId, enabled: false });
      expect(disabled.enabled).toBe(false);
      expect(disabled.nextRunAt).toBeUndefined();
      expect(h.job(job.jobId).nextRunAt).toBeUndefined();
      expect(h.clock.pendingTimers()).toBe(0);

      await h.run(HOUR + 2 * MINUTE);
      expect(h.fire.calls).toEqual([]);

      const enabled = await h.scheduler().update({ jobId: job.jobId, enabled: true });
      // No run for the hour it was off: the next slot after now, on the job's 5-minute grid.
      expect(enabled.nextRunAt).toBe(iso(T0 + HOUR + 5 * MINUTE));
      await h.run(3 * MINUTE);
      expect(h.fire.calls.map((call) => call.scheduledFor)).toEqual([iso(T0 + HOUR + 5 * MINUTE)]);
    });

    it('aims a new `every` schedule one interval from the change', async () => {
      await using h = await startHarness();
      const job = await h.add({ schedule: { every: '1h' } });
      await h.run(10 * MINUTE);

      const changed = await h.scheduler().update({ jobId: job.jobId, schedule: { every: '5m' } });
      expect(changed.nextRunAt).toBe(iso(T0 + 15 * MINUTE));
      await h.run(0);
      expect(h.fire.calls).toEqual([]);
      await h.run(5 * MINUTE);
      expect(h.fire.calls.map((call) => call.scheduledFor)).toEqual([iso(T0 + 15 * MINUTE)]);
    });

    it('runs a job now on request, records the run and keeps its next slot', async () => {
      await using h = await startHarness();
      const job = await h.add({ schedule: { every: '5m' } });
      await h.run(2 * MINUTE);

      const ran = await h.scheduler().runNow(job.jobId);
      expect(h.fire.calls.map((call) => [call.scheduledFor, call.at])).toEqual([
        [iso(T0 + 2 * MINUTE), iso(T0 + 2 * MINUTE)],
      ]);
      expect(ran).toMatchObject({
        runs: 1,
        nextRunAt: iso(T0 + 5 * MINUTE),
        lastRun: { scheduledFor: iso(T0 + 2 * MINUTE), outcome: 'started' },
      });
      expect(h.job(job.jobId)).toEqual(ran);
      expect(h.events).toEqual([
        expect.objectContaining({ type: 'cron.fired', jobId: job.jobId, scheduledFor: iso(T0 + 2 * MINUTE) }),
      ]);

      await h.run(3 * MINUTE);
      expect(h.fire.calls.map((call) => call.scheduledFor)).toEqual([iso(T0 + 2 * MINUTE), iso(T0 + 5 * MINUTE)]);
    });

    it('counts a run made on request towards `maxRuns`', async () => {
      await using h = await startHarness();
      const job = await h.add({ schedule: { every: '5m' }, maxRuns: 1 });

      const ran = await h.scheduler().runNow(job.jobId);
      expect(ran.runs).toBe(1);
      expect(ran.nextRunAt).toBeUndefined();
      await h.run(HOUR);
      expect(h.fire.calls).toHaveLength(1);
    });
  });

  describe('refusals', () => {
    const badInputs: Array<{ what: string; fields: AddFields; field: string }> = [
      { what: 'a zero interval', fields: { schedule: { every: '0m' } }, field: 'schedule.every' },
      { what: 'an interval under the minute', fields: { schedule: { every: '30s' } }, field: 'schedule.every' },
      { what: 'an unknown unit', fields: { schedule: { every: '5x' } }, field: 'schedule.every' },
      { what: 'an `at` in the past', fields: { schedule: { at: '2026-03-02T09:00:00Z' } }, field: 'schedule.at' },
      { what: 'a bad cron expression', fields: { schedule: { cron: '61 * * * *' } }, field: 'schedule.cron' },
      {
        what: 'an unknown zone',
        fields: { schedule: { cron: '0 9 * * *', tz: 'Mars/Olympus' } },
        field: 'schedule.tz',
      },
      {
        what: 'an `until` in the past',
        fields: { schedule: { every: '5m' }, until: '2026-03-01T00:00:00Z' },
        field: 'until',
      },
    ];

    it.each(badInputs)('refuses $what naming the field, storing nothing', async ({ fields, field }) => {
      await using h = await startHarness();
      await h.add({ schedule: { every: '1h' }, name: 'already there' });
      const before = await readFile(h.jobsPath());

      const error = await molfErrorOf(h.add(fields));
      expect(error.code).toBe('invalid_input');
      expect(error.field).toBe(field);
      expect(error.message).toContain(`${field}:`);
      expect(h.scheduler().list()).toHaveLength(1);
      expect(await readFile(h.jobsPath())).toEqual(before);
      expect(h.fire.calls).toEqual([]);
    });

    it('stores nothing when the job check refuses it', async () => {
      const checked: CronJob[] = [];
      await using h = await startHarness({
        async checkJob(job) {
          checked.push(job);
          throw new MolfError('invalid_input', `workerId: no worker ${job.workerId}`, { field: 'workerId' });
        },
      });

      const error = await molfErrorOf(h.add({ schedule: { every: '5m' } }));
      expect(error).toMatchObject({ code: 'invalid_input', field: 'workerId' });
      expect(checked).toHaveLength(1);
      expect(h.scheduler().list()).toEqual([]);
      await expect(readFile(h.jobsPath())).rejects.toMatchObject({ code: 'ENOENT' });
      expect(h.clock.pendingTimers()).toBe(0);
    });

    it('answers job_not_found for an unknown job, and false on removing one', async () => {
      await using h = await startHarness();

      const updated = await molfErrorOf(h.scheduler().update({ jobId: UNKNOWN_JOB, name: 'renamed' }));
      expect(updated.code).toBe('job_not_found');
      const ranNow = await molfErrorOf(h.scheduler().runNow(UNKNOWN_JOB));
      expect(ranNow.code).toBe('job_not_found');
      expect(await h.scheduler().remove(UNKNOWN_JOB)).toBe(false);
      expect(h.fire.calls).toEqual([]);
    });
  });

  describe('concurrency', () => {
    it('never fires a job while its previous run is still being fired', async () => {
      await using h = await startHarness();
      const slow = createDeferred<CronFireResult>();
      h.fire.respond = () => slow.promise;
      const job = await h.add({ schedule: { every: '5m' } });

      // The slot comes and its run hangs; meanwhile another job keeps the timer going.
      h.clock.advance(5 * MINUTE);
      await until(() => h.fire.calls.length === 1, 'the first run');
      h.fire.respond = () => ({ outcome: 'started', sessionId: 'ses_other', messageId: 'msg_other' });
      const other = await h.add({ schedule: { at: '1m' } });
      h.clock.advance(MINUTE);
      await until(() => h.job(other.jobId).runs === 1, 'the other job to run');
      h.clock.advance(10 * MINUTE);
      const ranNow = h.scheduler().runNow(job.jobId);
      for (let turn = 0; turn < 50; turn += 1) await new Promise((resolve) => setImmediate(resolve));
      expect(h.fire.calls.map((call) => call.job.jobId)).toEqual([job.jobId, other.jobId]);

      // Once the hung run answers, the run asked for goes out, one after the other.
      slow.resolve({ outcome: 'started', sessionId: 'ses_slow', messageId: 'msg_slow' });
      await ranNow;
      expect(h.fire.calls.map((call) => call.job.jobId)).toEqual([job.jobId, other.jobId, job.jobId]);
      expect(h.fire.mostAtOncePerJob).toBe(1);
      expect(h.job(job.jobId).runs).toBe(2);
    });
  });

  describe('changes made while a run is being fired', () => {
    it('keeps a pause made while a run is fired, and the run’s record: no second run of the slot', async () => {
      await using h = await startHarness({ checkJob: () => new Promise((resolve) => setTimeout(resolve, 20)) });
      const slow = createDeferred<CronFireResult>();
      h.fire.respond = () => slow.promise;
      const job = await h.add({ schedule: { every: '5m' }, maxRuns: 1 });
      h.clock.advance(5 * MINUTE);
      await until(() => h.fire.calls.length === 1, 'the run being fired');
      const paused = h.scheduler().update({ jobId: job.jobId, enabled: false, name: 'renamed' });
      slow.resolve({ outcome: 'started', sessionId: 'ses_1', messageId: 'msg_1' });
      await paused;
      await until(() => h.job(job.jobId).runs === 1, 'the run recorded');
      expect(h.job(job.jobId)).toMatchObject({
        enabled: false,
        name: 'renamed',
        runs: 1,
        lastRun: { outcome: 'started' },
      });
      expect(h.job(job.jobId).nextRunAt).toBeUndefined();
      await h.run(HOUR);
      expect(h.fire.calls).toHaveLength(1);
    });

    it('does not fire a slot again at once when its run cannot be recorded: it waits, then runs', async () => {
      await using h = await startHarness();
      const job = await h.add({ schedule: { every: '5m' } });
      // The disk is full: every record of a run fails.
      h.failRecords(true);
      h.clock.advance(5 * MINUTE);
      await until(() => h.fire.calls.length === 1, 'the first run');
      for (let turn = 0; turn < 200; turn += 1) await new Promise((resolve) => setImmediate(resolve));
      expect(h.fire.calls).toHaveLength(1);
      h.clock.advance(29_000);
      for (let turn = 0; turn < 200; turn += 1) await new Promise((resolve) => setImmediate(resolve));
      expect(h.fire.calls).toHaveLength(1);
      // Space again: after the wait, the slot runs once more and is recorded.
      h.failRecords(false);
      await h.run(MINUTE);
      expect(h.fire.calls).toHaveLength(2);
      expect(h.job(job.jobId).runs).toBe(1);
    });

    it('runs a job asked to run now with its latest prompt, one run at a time', async () => {
      await using h = await startHarness();
      const slow = createDeferred<CronFireResult>();
      h.fire.respond = () => slow.promise;
      const job = await h.add({ schedule: { every: '1h' }, prompt: 'old prompt' });
      const first = h.scheduler().runNow(job.jobId);
      await until(() => h.fire.calls.length === 1, 'the first run');
      const second = h.scheduler().runNow(job.jobId);
      await h.scheduler().update({ jobId: job.jobId, prompt: 'new prompt' });
      h.fire.respond = () => ({ outcome: 'started', sessionId: 'ses_2', messageId: 'msg_2' });
      slow.resolve({ outcome: 'started', sessionId: 'ses_1', messageId: 'msg_1' });
      await Promise.all([first, second]);
      expect(h.fire.calls.map((call) => call.job.prompt)).toEqual(['old prompt', 'new prompt']);
      expect(h.fire.mostAtOncePerJob).toBe(1);
    });

    it('does not run a job asked to run now once it was removed while the run before was fired', async () => {
      await using h = await startHarness();
      const slow = createDeferred<CronFireResult>();
      h.fire.respond = () => slow.promise;
      const job = await h.add({ schedule: { every: '1h' } });
      const first = h.scheduler().runNow(job.jobId);
      await until(() => h.fire.calls.length === 1, 'the first run');
      const second = h.scheduler().runNow(job.jobId);
      await h.scheduler().remove(job.jobId);
      slow.resolve({ outcome: 'started', sessionId: 'ses_1', messageId: 'msg_1' });
      await expect(first).rejects.toMatchObject({ code: 'job_not_found' });
      await expect(second).rejects.toMatchObject({ code: 'job_not_found' });
      expect(h.fire.calls).toHaveLength(1);
    });
  });
});

for (const backend of stateBackends()) {
  const suite = backend.unavailable === undefined ? describe : describe.skip;
  suite(backendTitle('cron scheduler across two servers', backend), () => {
    it('fires a job another server created, and a removal made here is gone there', async () => {
      await using place = await backend.prepare();
      const started: Array<{ store: CronJobStore; scheduler: CronScheduler }> = [];
      const startOne = async (clock: FakeClock, fire: FakeFire) => {
        const store = await openCronJobStore({ documents: (await place.open()).documents });
        const scheduler = await startCronScheduler({
          store,
          fire: fire.fire,
          logger: createSilentLogger(),
          clock,
          defaultTimezone: 'UTC',
        });
        started.push({ store, scheduler });
        return scheduler;
      };
      try {
        // The first server's clock never moves: only the second one's timer can fire the job.
        const [clockOne, clockTwo] = [createFakeClock(START), createFakeClock(START)];
        const [fireOne, fireTwo] = [createFakeFire(clockOne), createFakeFire(clockTwo)];
        const one = await startOne(clockOne, fireOne);
        const two = await startOne(clockTwo, fireTwo);

        const job = await one.add(
          { workerId: WORKER, prompt: 'Run the tests.', schedule: { every: '5m' } },
          { createdBy: { client: 'test' }, defaultTarget: { type: 'new' } },
        );
        await until(() => two.get(job.jobId) !== undefined, 'the second server to list the job');
        expect(two.list().map((listed) => listed.jobId)).toEqual([job.jobId]);
        // The timer waits a minute at most: moved a minute at a time, it fires at the fifth.
        for (let minute = 1; minute <= 5; minute += 1) {
          await until(() => clockTwo.pendingTimers() > 0, "the second server's timer");
          clockTwo.advance(MINUTE);
        }
        await until(() => fireTwo.calls.length === 1 && fireTwo.inFlight === 0, 'the run on the second server');
        expect(fireTwo.calls[0]?.job.jobId).toBe(job.jobId);
        expect(fireOne.calls).toEqual([]);
        await until(() => one.get(job.jobId)?.runs === 1, 'the run recorded, seen by the first server');

        expect(await two.remove(job.jobId)).toBe(true);
        await until(() => one.list().length === 0, 'the first server to lose the job');
      } finally {
        for (const { scheduler, store } of started) {
          await scheduler.close();
          await store.close();
        }
      }
    });
  });
}

import type { CronJob } from '@molf/protocol';
import type { CronClock, CronFire, CronFireResult } from '../cron/cron-scheduler.ts';

// A clock the test moves and a fire that records its calls: a cron test reads like a day in the
// life of the jobs, with no real minutes passing and no fake timers installed.

const iso = (ms: number) => new Date(ms).toISOString();

export type FakeClock = CronClock & {
  /** Moves the time by `ms`, then calls the timers due by then, earliest first. */
  advance(ms: number): void;
  /** When the earliest pending timer is due. */
  nextTimerAt(): number | undefined;
  pendingTimers(): number;
  /** Every delay a timer was set with, in order. */
  readonly delays: number[];
};

export function createFakeClock(start: string): FakeClock {
  let now = Date.parse(start);
  let sequence = 0;
  const timers = new Map<number, { at: number; callback: () => void }>();
  const delays: number[] = [];
  return {
    now: () => now,
    setTimer(callback, delayMs) {
      const id = sequence++;
      delays.push(delayMs);
      timers.set(id, { at: now + delayMs, callback });
      return () => {
        timers.delete(id);
      };
    },
    advance(ms) {
      now += ms;
      const due = [...timers]
        .filter(([, timer]) => timer.at <= now)
        .sort(([idA, a], [idB, b]) => a.at - b.at || idA - idB);
      for (const [id, timer] of due) {
        // A callback may cancel a later timer: only the ones still pending run.
        if (timers.delete(id)) timer.callback();
      }
    },
    nextTimerAt() {
      const times = [...timers.values()].map((timer) => timer.at);
      return times.length === 0 ? undefined : Math.min(...times);
    },
    pendingTimers: () => timers.size,
    delays,
  };
}

export type FireCall = { job: CronJob; scheduledFor: string; at: string };

export type FakeFire = {
  fire: CronFire;
  calls: FireCall[];
  /** What the next call answers; a started run with numbered ids unless a test says otherwise. */
  respond: (job: CronJob) => CronFireResult | Promise<CronFireResult>;
  /** Calls that have not answered yet. */
  inFlight: number;
  /** The most calls for one job that were ever running at once. */
  mostAtOncePerJob: number;
};

export function createFakeFire(clock: CronClock): FakeFire {
  let count = 0;
  const running = new Map<string, number>();
  const fake: FakeFire = {
    calls: [],
    inFlight: 0,
    mostAtOncePerJob: 0,
    respond: () => started(),
    async fire(job, scheduledFor) {
      fake.calls.push({ job: structuredClone(job), scheduledFor: scheduledFor.toISOString(), at: iso(clock.now()) });
      const atOnce = (running.get(job.jobId) ?? 0) + 1;
      running.set(job.jobId, atOnce);
      fake.mostAtOncePerJob = Math.max(fake.mostAtOncePerJob, atOnce);
      fake.inFlight += 1;
      try {
        return await fake.respond(job);
      } finally {
        fake.inFlight -= 1;
        running.set(job.jobId, (running.get(job.jobId) ?? 1) - 1);
      }
    },
  };
  function started(): CronFireResult {
    count += 1;
    return { outcome: 'started', sessionId: `ses_${count}`, messageId: `msg_${count}` };
  }
  return fake;
}

/** Waits, a turn of the event loop at a time, until `predicate` holds (a generous deadline, no sleeps). */
export async function until(predicate: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

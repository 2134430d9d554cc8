import type { CronClock } from '../cron/index.ts';

/**
 * A clock tests move by hand: `advance` moves the time and calls the timers that came due, in
 * order. `delays` keeps every delay a timer was set with.
 */
export function createManualClock(start: Date) {
  let now = start.getTime();
  let timers: Array<{ at: number; callback: () => void; cancelled: boolean }> = [];
  const delays: number[] = [];
  const clock: CronClock = {
    now: () => now,
    setTimer(callback, delayMs) {
      delays.push(delayMs);
      const timer = { at: now + delayMs, callback, cancelled: false };
      // A timer whose time has come (set after `advance` moved past it) fires at once, as a real one would.
      if (delayMs <= 0) {
        setImmediate(() => {
          if (!timer.cancelled) callback();
        });
      } else {
        timers.push(timer);
      }
      return () => {
        timer.cancelled = true;
      };
    },
  };
  return {
    clock,
    delays,
    now: () => new Date(now),
    /** Moves the time on by `ms`, calling each timer due on the way at its own time. */
    advance(ms: number): void {
      const end = now + ms;
      for (;;) {
        const due = timers.filter((timer) => !timer.cancelled && timer.at <= end).sort((a, b) => a.at - b.at)[0];
        if (due === undefined) break;
        now = Math.max(now, due.at);
        due.cancelled = true;
        timers = timers.filter((timer) => !timer.cancelled);
        due.callback();
      }
      now = end;
    },
  };
}

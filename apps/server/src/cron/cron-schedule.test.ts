import { type CronSchedule, type CronScheduleInput, DEFAULT_MIN_CRON_INTERVAL_MS, MolfError } from '@molf/protocol';
import { describe, expect, it } from 'vitest';
import { dueAfterDowntime, nextRunAfter, resolveSchedule, resolveUntil } from './cron-schedule.ts';

const now = new Date('2026-11-24T08:00:00.000Z');
const options = { now, defaultTimezone: 'UTC', minIntervalMs: DEFAULT_MIN_CRON_INTERVAL_MS };
const resolve = (input: CronScheduleInput, overrides: Partial<typeof options> = {}) =>
  resolveSchedule(input, { ...options, ...overrides });

/** The `MolfError` `run` throws; fails the test when it throws nothing or something else. */
function errorOf(run: () => unknown): MolfError {
  try {
    run();
  } catch (error) {
    if (error instanceof MolfError) return error;
    throw error;
  }
  throw new Error('expected an error, and nothing was thrown');
}

/** The hour and minute a time shows on a clock in `timeZone`, as `09:00`. */
function localClock(date: Date, timeZone: string): string {
  return new Intl.DateTimeFormat('en-GB', { timeZone, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(
    date,
  );
}

/** The first `count` slots after `after`, each found from the one before. */
function slots(schedule: CronSchedule, after: string, count: number): string[] {
  const found: string[] = [];
  let cursor = new Date(after);
  for (let index = 0; index < count; index += 1) {
    const next = nextRunAfter(schedule, cursor);
    if (next === undefined) break;
    found.push(next.toISOString());
    cursor = next;
  }
  return found;
}

const berlin = (expression: string): CronSchedule => ({ kind: 'cron', expression, timezone: 'Europe/Berlin' });

describe('resolveSchedule', () => {
  describe('at', () => {
    it('stores an ISO time with Z or an offset in UTC', () => {
      expect(resolve({ at: '2026-11-24T09:00:00Z' })).toEqual({ kind: 'at', at: '2026-11-24T09:00:00.000Z' });
      expect(resolve({ at: '2026-11-24T10:30:00+01:00' })).toEqual({ kind: 'at', at: '2026-11-24T09:30:00.000Z' });
      expect(resolve({ at: '2026-11-24 03:00-0530' })).toEqual({ kind: 'at', at: '2026-11-24T08:30:00.000Z' });
      expect(resolve({ at: '2026-11-24T09:00:05.25z' })).toEqual({ kind: 'at', at: '2026-11-24T09:00:05.250Z' });
    });

    it('reads a duration as that long from now', () => {
      expect(resolve({ at: '20m' })).toEqual({ kind: 'at', at: '2026-11-24T08:20:00.000Z' });
      expect(resolve({ at: '1.5d' })).toEqual({ kind: 'at', at: '2026-11-25T20:00:00.000Z' });
    });

    it('refuses an ISO time without offset rather than guess the zone', () => {
      const error = errorOf(() => resolve({ at: '2026-11-24T09:00:00' }));
      expect(error.field).toBe('schedule.at');
      expect(error.message).toMatch(/has no offset: add Z for UTC or an offset such as \+01:00/);
    });

    it('refuses a date without time of day, a date that does not exist, and a text that is neither', () => {
      expect(errorOf(() => resolve({ at: '2026-11-25' })).message).toMatch(/no time of day/);
      expect(errorOf(() => resolve({ at: '2027-02-30T09:00:00Z' })).message).toMatch(/not a time that exists/);
      expect(errorOf(() => resolve({ at: '2026-11-24T24:00:00Z' })).message).toMatch(/not a time that exists/);
      expect(errorOf(() => resolve({ at: 'tomorrow' })).message).toMatch(
        /neither an ISO 8601 time .* nor a duration from now/,
      );
      expect(errorOf(() => resolve({ at: '-5m' })).message).toMatch(/positive/);
    });

    it('refuses a time in the past, or now, and shows it', () => {
      const error = errorOf(() => resolve({ at: '2026-11-24T07:59:30Z' }));
      expect(error.field).toBe('schedule.at');
      expect(error.message).toBe(
        'schedule.at: 2026-11-24 07:59:30 UTC is in the past (it is now 2026-11-24 08:00 UTC): give a later time or a duration from now',
      );
      expect(errorOf(() => resolve({ at: now.toISOString() })).message).toMatch(/in the past/);
    });
  });

  describe('every', () => {
    it('stores the interval in ms, anchored at now unless an anchor is given', () => {
      expect(resolve({ every: '30m' })).toEqual({ kind: 'every', everyMs: 1_800_000, anchor: now.toISOString() });
      expect(resolve({ every: '1d', anchor: '2026-11-20T09:00:00+01:00' })).toEqual({
        kind: 'every',
        everyMs: 86_400_000,
        anchor: '2026-11-20T08:00:00.000Z',
      });
    });

    it('refuses an interval below the minimum, saying the minimum and that the configuration can lower it', () => {
      const error = errorOf(() => resolve({ every: '30s' }));
      expect(error.field).toBe('schedule.every');
      expect(error.message).toBe(
        "schedule.every: every 30s is too often: the shortest interval is 1m (the server's configuration can lower it)",
      );
      expect(resolve({ every: '30s' }, { minIntervalMs: 10_000 })).toMatchObject({ everyMs: 30_000 });
      expect(resolve({ every: '1m' })).toMatchObject({ everyMs: 60_000 });
    });

    it('refuses a bad duration and an anchor without offset', () => {
      expect(errorOf(() => resolve({ every: '5x' })).field).toBe('schedule.every');
      expect(errorOf(() => resolve({ every: '0s' })).field).toBe('schedule.every');
      const anchor = errorOf(() => resolve({ every: '1h', anchor: '2026-11-24T09:00' }));
      expect(anchor.field).toBe('schedule.anchor');
      expect(anchor.message).toMatch(/no offset/);
    });
  });

  describe('cron', () => {
    it('stores the expression in the given zone, or the default one', () => {
      expect(resolve({ cron: ' 0 9 * * 1-5 ', tz: 'Europe/Berlin' })).toEqual({
        kind: 'cron',
        expression: '0 9 * * 1-5',
        timezone: 'Europe/Berlin',
      });
      expect(resolve({ cron: '0 9 * * *' }, { defaultTimezone: 'America/New_York' })).toEqual({
        kind: 'cron',
        expression: '0 9 * * *',
        timezone: 'America/New_York',
      });
    });

    it('takes a 6-field expression with seconds first', () => {
      const schedule = resolve({ cron: '30 15 9 * * *' });
      expect(schedule).toEqual({ kind: 'cron', expression: '30 15 9 * * *', timezone: 'UTC' });
      expect(nextRunAfter(schedule, now)?.toISOString()).toBe('2026-11-24T09:15:30.000Z');
    });

    it('refuses an expression croner refuses, with croner’s reason', () => {
      const error = errorOf(() => resolve({ cron: '61 * * * *' }));
      expect(error.field).toBe('schedule.cron');
      expect(error.message).toBe('schedule.cron: "61 * * * *" is not a cron expression: Invalid value for minute: 61');
      expect(errorOf(() => resolve({ cron: '* * * *' })).message).toMatch(/five, six, or seven .* parts/);
      expect(errorOf(() => resolve({ cron: '0 0 9 * * * 2027' })).message).toMatch(/requires exactly 5 or 6 parts/);
      expect(errorOf(() => resolve({ cron: 'every day' })).field).toBe('schedule.cron');
    });

    it('refuses a time written as a cron expression (croner would run it once)', () => {
      const error = errorOf(() => resolve({ cron: '2026-12-01T09:00:00' }));
      expect(error.field).toBe('schedule.cron');
      expect(error.message).toMatch(/is a time, not a cron expression: use at/);
    });

    it('refuses an expression that never runs', () => {
      const error = errorOf(() => resolve({ cron: '0 0 30 2 *' }));
      expect(error.field).toBe('schedule.cron');
      expect(error.message).toMatch(/never runs/);
    });

    it('refuses an expression that runs more often than the minimum interval', () => {
      const error = errorOf(() => resolve({ cron: '*/10 * * * * *' }));
      expect(error.field).toBe('schedule.cron');
      expect(error.message).toMatch(/as often as every 10s: the shortest interval is 1m \(the server's configuration/);
      expect(errorOf(() => resolve({ cron: '0,30 0 9 * * *' })).message).toMatch(/every 30s/);
      // From the last run of one hour (hh:59:01) to the first of the next, and from 23:00 to 00:00.
      expect(errorOf(() => resolve({ cron: '1 0,59 * * * *' }, { minIntervalMs: 120_000 })).message).toMatch(
        /every 1m/,
      );
      expect(errorOf(() => resolve({ cron: '0 0,23 * * *' }, { minIntervalMs: 2 * 3_600_000 })).message).toMatch(
        /every 1h/,
      );
      expect(resolve({ cron: '*/10 * * * * *' }, { minIntervalMs: 10_000 })).toMatchObject({ kind: 'cron' });
      expect(resolve({ cron: '* * * * *' })).toMatchObject({ kind: 'cron' });
    });

    it('refuses a zone that is not an IANA zone, naming schedule.tz', () => {
      const error = errorOf(() => resolve({ cron: '0 9 * * *', tz: 'Mars/Olympus' }));
      expect(error.field).toBe('schedule.tz');
      expect(error.message).toMatch(/"Mars\/Olympus" is not an IANA time zone/);
      const server = errorOf(() => resolve({ cron: '0 9 * * *' }, { defaultTimezone: 'Nowhere/City' }));
      expect(server.field).toBe('schedule.tz');
      expect(server.message).toMatch(/the server's time zone "Nowhere\/City"/);
    });
  });

  it('takes exactly one of at, every and cron', () => {
    const none = errorOf(() => resolve({}));
    expect(none.field).toBe('schedule');
    expect(none.message).toMatch(/give one of at/);
    const two = errorOf(() => resolve({ at: '20m', cron: '0 9 * * *' }));
    expect(two.field).toBe('schedule');
    expect(two.message).toMatch(/not at and cron/);
  });

  it('takes an anchor only with every, and a zone only with cron', () => {
    expect(errorOf(() => resolve({ at: '20m', anchor: '2026-11-24T09:00:00Z' })).field).toBe('schedule.anchor');
    expect(errorOf(() => resolve({ every: '1h', tz: 'UTC' })).field).toBe('schedule.tz');
  });
});

describe('resolveUntil', () => {
  it('reads an ISO time with offset or a duration from now, as ISO in UTC', () => {
    expect(resolveUntil('2026-12-01T00:00:00+01:00', now)).toBe('2026-11-30T23:00:00.000Z');
    expect(resolveUntil('3d', now)).toBe('2026-11-27T08:00:00.000Z');
  });

  it('refuses a time that is not in the future, and bad text, naming until', () => {
    const past = errorOf(() => resolveUntil('2026-11-01T00:00:00Z', now));
    expect(past.field).toBe('until');
    expect(past.message).toMatch(/2026-11-01 00:00 UTC is in the past/);
    expect(errorOf(() => resolveUntil(now.toISOString(), now)).field).toBe('until');
    expect(errorOf(() => resolveUntil('0d', now)).field).toBe('until');
    expect(errorOf(() => resolveUntil('2026-12-01T00:00:00', now)).message).toMatch(/^until: .* no offset/);
  });
});

describe('nextRunAfter', () => {
  it('gives an `at` time only when it is after the given time', () => {
    const schedule: CronSchedule = { kind: 'at', at: '2026-11-24T09:00:00.000Z' };
    expect(nextRunAfter(schedule, now)?.toISOString()).toBe('2026-11-24T09:00:00.000Z');
    expect(nextRunAfter(schedule, new Date('2026-11-24T09:00:00.000Z'))).toBeUndefined();
    expect(nextRunAfter(schedule, new Date('2026-11-24T10:00:00.000Z'))).toBeUndefined();
  });

  it('gives anchor + k × every for `every`, and the anchor itself before it', () => {
    const schedule: CronSchedule = { kind: 'every', everyMs: 3_600_000, anchor: '2026-11-24T09:15:00.000Z' };
    expect(nextRunAfter(schedule, new Date('2026-11-01T00:00:00Z'))?.toISOString()).toBe('2026-11-24T09:15:00.000Z');
    expect(nextRunAfter(schedule, new Date('2026-11-24T09:14:59.999Z'))?.toISOString()).toBe(
      '2026-11-24T09:15:00.000Z',
    );
    expect(nextRunAfter(schedule, new Date('2026-11-24T09:15:00.000Z'))?.toISOString()).toBe(
      '2026-11-24T10:15:00.000Z',
    );
    expect(nextRunAfter(schedule, new Date('2026-11-25T03:40:00Z'))?.toISOString()).toBe('2026-11-25T04:15:00.000Z');
    expect(slots(schedule, '2026-11-24T12:15:00Z', 3)).toEqual([
      '2026-11-24T13:15:00.000Z',
      '2026-11-24T14:15:00.000Z',
      '2026-11-24T15:15:00.000Z',
    ]);
  });

  it('gives croner’s next run for `cron`, strictly after the given time', () => {
    const schedule: CronSchedule = { kind: 'cron', expression: '0 9 * * *', timezone: 'UTC' };
    expect(nextRunAfter(schedule, new Date('2026-11-24T08:59:59.999Z'))?.toISOString()).toBe(
      '2026-11-24T09:00:00.000Z',
    );
    expect(nextRunAfter(schedule, new Date('2026-11-24T09:00:00.000Z'))?.toISOString()).toBe(
      '2026-11-25T09:00:00.000Z',
    );
    expect(nextRunAfter(schedule, new Date('2026-11-24T09:00:00.400Z'))?.toISOString()).toBe(
      '2026-11-25T09:00:00.000Z',
    );
  });

  it('never gives a time at or before the given one', () => {
    const schedules: CronSchedule[] = [
      { kind: 'at', at: '2026-03-29T01:00:00.000Z' },
      { kind: 'every', everyMs: 90_000, anchor: '2026-03-29T00:00:00.500Z' },
      berlin('0 2 * * *'),
      berlin('30 2 * * *'),
      berlin('*/30 2 * * *'),
      berlin('15,45 * * * * *'),
      berlin('0 9 * * 1-5'),
    ];
    // Each quarter hour and then some, through both 2026 DST changes in Berlin, at odd milliseconds.
    const starts = ['2026-03-28T22:00:00.000Z', '2026-10-24T22:00:00.000Z'];
    for (const schedule of schedules) {
      for (const start of starts) {
        for (let step = 0; step < 6 * 4 * 4; step += 1) {
          const after = new Date(Date.parse(start) + step * 15 * 60_000 + (step % 4) * 333);
          const next = nextRunAfter(schedule, after);
          if (next !== undefined) expect(next.getTime()).toBeGreaterThan(after.getTime());
        }
      }
    }
  });
});

describe('cron across DST changes in Europe/Berlin (croner: fixed times as Vixie cron)', () => {
  it('runs a fixed 02:00 or 02:30 job at 03:00 CEST, the first time after the gap, on the spring-forward day', () => {
    expect(slots(berlin('0 2 * * *'), '2026-03-27T12:00:00Z', 3)).toEqual([
      '2026-03-28T01:00:00.000Z', // 02:00 CET
      '2026-03-29T01:00:00.000Z', // 03:00 CEST: 02:00 did not exist
      '2026-03-30T00:00:00.000Z', // 02:00 CEST
    ]);
    expect(slots(berlin('30 2 * * *'), '2026-03-27T12:00:00Z', 3)).toEqual([
      '2026-03-28T01:30:00.000Z', // 02:30 CET
      '2026-03-29T01:00:00.000Z', // 03:00 CEST, not 03:30
      '2026-03-30T00:30:00.000Z', // 02:30 CEST
    ]);
  });

  it('runs a fixed 02:00 or 02:30 job once, at the first of the two, on the fall-back day', () => {
    expect(slots(berlin('0 2 * * *'), '2026-10-23T12:00:00Z', 3)).toEqual([
      '2026-10-24T00:00:00.000Z', // 02:00 CEST
      '2026-10-25T00:00:00.000Z', // 02:00 CEST, the first 02:00; not again at 02:00 CET
      '2026-10-26T01:00:00.000Z', // 02:00 CET
    ]);
    expect(slots(berlin('30 2 * * *'), '2026-10-23T12:00:00Z', 3)).toEqual([
      '2026-10-24T00:30:00.000Z',
      '2026-10-25T00:30:00.000Z',
      '2026-10-26T01:30:00.000Z',
    ]);
  });

  it('skips the gap and runs in both passes of the repeated hour for an interval job', () => {
    expect(slots(berlin('*/30 2 * * *'), '2026-03-28T23:00:00Z', 2)).toEqual([
      '2026-03-30T00:00:00.000Z',
      '2026-03-30T00:30:00.000Z',
    ]);
    expect(slots(berlin('*/30 2 * * *'), '2026-10-24T23:00:00Z', 5)).toEqual([
      '2026-10-25T00:00:00.000Z', // 02:00 CEST
      '2026-10-25T00:30:00.000Z', // 02:30 CEST
      '2026-10-25T01:00:00.000Z', // 02:00 CET
      '2026-10-25T01:30:00.000Z', // 02:30 CET
      '2026-10-26T01:00:00.000Z',
    ]);
  });

  it('keeps a weekday 09:00 job at 09:00 local while its UTC hour moves', () => {
    const spring = slots(berlin('0 9 * * 1-5'), '2026-03-26T12:00:00Z', 2);
    expect(spring).toEqual(['2026-03-27T08:00:00.000Z', '2026-03-30T07:00:00.000Z']);
    const autumn = slots(berlin('0 9 * * 1-5'), '2026-10-22T12:00:00Z', 2);
    expect(autumn).toEqual(['2026-10-23T07:00:00.000Z', '2026-10-26T08:00:00.000Z']);
    for (const slot of [...spring, ...autumn]) expect(localClock(new Date(slot), 'Europe/Berlin')).toBe('09:00');
  });
});

describe('dueAfterDowntime', () => {
  const at = (iso: string) => new Date(iso);

  describe('at', () => {
    const schedule: CronSchedule = { kind: 'at', at: '2026-11-24T09:00:00.000Z' };

    it.each(['run_once', 'skip'] as const)('runs a missed `at` once, at its time, with policy %s', (policy) => {
      expect(dueAfterDowntime(schedule, { lastSlot: undefined, now: at('2026-11-24T12:00:00Z'), policy })).toEqual({
        runNow: at('2026-11-24T09:00:00Z'),
        next: undefined,
      });
      // Made at 08:00, the server down from before 09:00 to 12:00.
      expect(
        dueAfterDowntime(schedule, { lastSlot: at('2026-11-24T08:00:00Z'), now: at('2026-11-24T12:00:00Z'), policy }),
      ).toEqual({ runNow: at('2026-11-24T09:00:00Z'), next: undefined });
    });

    it('does nothing for an `at` that ran, and waits for one still ahead', () => {
      expect(
        dueAfterDowntime(schedule, {
          lastSlot: at('2026-11-24T09:00:00Z'),
          now: at('2026-11-24T12:00:00Z'),
          policy: 'run_once',
        }),
      ).toEqual({ runNow: undefined, next: undefined });
      expect(
        dueAfterDowntime(schedule, { lastSlot: undefined, now: at('2026-11-24T08:30:00Z'), policy: 'skip' }),
      ).toEqual({ runNow: undefined, next: at('2026-11-24T09:00:00Z') });
    });
  });

  describe('every', () => {
    const schedule: CronSchedule = { kind: 'every', everyMs: 3_600_000, anchor: '2026-11-24T00:00:00.000Z' };
    const downtime = { lastSlot: at('2026-11-24T05:00:00Z'), now: at('2026-11-24T09:30:00Z') };

    it('runs once now for all missed slots, as the latest of them, then on schedule (run_once)', () => {
      expect(dueAfterDowntime(schedule, { ...downtime, policy: 'run_once' })).toEqual({
        runNow: at('2026-11-24T09:00:00Z'),
        next: at('2026-11-24T10:00:00Z'),
      });
    });

    it('does not run for missed slots and waits for the next (skip)', () => {
      expect(dueAfterDowntime(schedule, { ...downtime, policy: 'skip' })).toEqual({
        runNow: undefined,
        next: at('2026-11-24T10:00:00Z'),
      });
    });

    it('runs nothing when no slot passed, and counts a slot exactly at now as missed', () => {
      expect(
        dueAfterDowntime(schedule, {
          lastSlot: at('2026-11-24T09:00:00Z'),
          now: at('2026-11-24T09:59:59.999Z'),
          policy: 'run_once',
        }),
      ).toEqual({ runNow: undefined, next: at('2026-11-24T10:00:00Z') });
      expect(
        dueAfterDowntime(schedule, {
          lastSlot: at('2026-11-24T09:00:00Z'),
          now: at('2026-11-24T10:00:00Z'),
          policy: 'run_once',
        }),
      ).toEqual({ runNow: at('2026-11-24T10:00:00Z'), next: at('2026-11-24T11:00:00Z') });
    });

    it('counts no slot before the anchor, and no slot at all without a last slot', () => {
      const anchored: CronSchedule = { kind: 'every', everyMs: 3_600_000, anchor: '2026-11-24T10:00:00.000Z' };
      expect(
        dueAfterDowntime(anchored, {
          lastSlot: at('2026-11-24T05:00:00Z'),
          now: at('2026-11-24T09:30:00Z'),
          policy: 'run_once',
        }),
      ).toEqual({ runNow: undefined, next: at('2026-11-24T10:00:00Z') });
      expect(dueAfterDowntime(schedule, { lastSlot: undefined, now: downtime.now, policy: 'run_once' })).toEqual({
        runNow: undefined,
        next: at('2026-11-24T10:00:00Z'),
      });
    });

    it('counts the first slot, missed before the first run, from when the job was made', () => {
      const made = at('2026-11-24T08:00:00Z');
      const fresh: CronSchedule = { kind: 'every', everyMs: 3_600_000, anchor: made.toISOString() };
      expect(dueAfterDowntime(fresh, { lastSlot: made, now: at('2026-11-24T09:10:00Z'), policy: 'run_once' })).toEqual({
        runNow: at('2026-11-24T09:00:00Z'),
        next: at('2026-11-24T10:00:00Z'),
      });
      // The anchor is the moment it was made: not a slot to run.
      expect(dueAfterDowntime(fresh, { lastSlot: made, now: at('2026-11-24T08:10:00Z'), policy: 'run_once' })).toEqual({
        runNow: undefined,
        next: at('2026-11-24T09:00:00Z'),
      });
    });
  });

  describe('cron', () => {
    const schedule = berlin('0 9 * * 1-5');
    // Down from Friday 2026-03-27 09:00 (08:00Z, which ran) to Tuesday 2026-03-31 12:00 CEST.
    const downtime = { lastSlot: at('2026-03-27T08:00:00Z'), now: at('2026-03-31T10:00:00Z') };

    it('runs once now for the missed weekdays, as the latest, then on schedule (run_once)', () => {
      expect(dueAfterDowntime(schedule, { ...downtime, policy: 'run_once' })).toEqual({
        runNow: at('2026-03-31T07:00:00Z'),
        next: at('2026-04-01T07:00:00Z'),
      });
    });

    it('does not run for missed slots and waits for the next (skip)', () => {
      expect(dueAfterDowntime(schedule, { ...downtime, policy: 'skip' })).toEqual({
        runNow: undefined,
        next: at('2026-04-01T07:00:00Z'),
      });
    });

    it('runs nothing over a weekend without slots, and counts a slot exactly at now', () => {
      expect(
        dueAfterDowntime(schedule, {
          lastSlot: at('2026-03-27T08:00:00Z'),
          now: at('2026-03-29T20:00:00Z'),
          policy: 'run_once',
        }),
      ).toEqual({ runNow: undefined, next: at('2026-03-30T07:00:00Z') });
      expect(
        dueAfterDowntime(schedule, {
          lastSlot: at('2026-03-27T08:00:00Z'),
          now: at('2026-03-30T07:00:00Z'),
          policy: 'run_once',
        }),
      ).toEqual({ runNow: at('2026-03-30T07:00:00Z'), next: at('2026-03-31T07:00:00Z') });
    });

    it('counts no slot as missed without a last slot', () => {
      expect(dueAfterDowntime(schedule, { lastSlot: undefined, now: downtime.now, policy: 'run_once' })).toEqual({
        runNow: undefined,
        next: at('2026-04-01T07:00:00Z'),
      });
    });
  });
});

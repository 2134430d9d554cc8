import { describe, expect, it } from 'vitest';
import { describeCronSchedule, formatCronDuration, formatUtcTime, parseDuration } from './cron-text.ts';
import { MolfError } from './errors.ts';

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

const anchor = '2026-11-24T09:00:00.000Z';

describe('cron schedules in words', () => {
  it('says when in a few words', () => {
    expect(describeCronSchedule({ kind: 'at', at: '2026-11-24T09:00:00.000Z' })).toBe('at 2026-11-24 09:00 UTC');
    expect(describeCronSchedule({ kind: 'at', at: '2026-11-24T09:00:30.250Z' })).toBe('at 2026-11-24 09:00:30 UTC');
    expect(describeCronSchedule({ kind: 'every', everyMs: 1_800_000, anchor })).toBe('every 30m');
    expect(describeCronSchedule({ kind: 'every', everyMs: 5_400_000, anchor })).toBe('every 90m');
    expect(describeCronSchedule({ kind: 'every', everyMs: 86_400_000, anchor })).toBe('every 1d');
    expect(describeCronSchedule({ kind: 'cron', expression: '0 9 * * 1-5', timezone: 'Europe/Berlin' })).toBe(
      'cron "0 9 * * 1-5" (Europe/Berlin)',
    );
  });

  it('writes durations in the largest unit that divides them, and leaves a text that is no time as it is', () => {
    expect([1_500, 45_000, 36 * 3_600_000].map(formatCronDuration)).toEqual(['1500ms', '45s', '36h']);
    expect(formatUtcTime('not a time')).toBe('not a time');
  });
});

describe('parseDuration', () => {
  it.each([
    ['30s', 30_000],
    ['5m', 300_000],
    ['2h', 7_200_000],
    ['1d', 86_400_000],
    ['1w', 604_800_000],
    ['1.5h', 5_400_000],
    ['.5m', 30_000],
    ['  20m ', 1_200_000],
    ['10 m', 600_000],
    ['366d', 366 * 86_400_000],
  ])('reads %j as %i ms', (text, ms) => {
    expect(parseDuration(text, 'schedule.every')).toBe(ms);
  });

  it.each([
    ['', /give a duration/],
    ['   ', /give a duration/],
    ['0', /no unit/],
    ['0m', /more than zero/],
    ['0.0001s', /more than zero/],
    ['-1m', /positive/],
    ['5x', /unknown unit "x"/],
    ['5M', /unknown unit "M"/],
    ['5', /has no unit: write 5s, 5m, 5h or 5d/],
    ['367d', /longest duration, 366d/],
    ['53w', /longest duration/],
    ['abc', /not a duration/],
    ['1h30m', /not a duration/],
  ])('refuses %j, naming the field', (text, message) => {
    const error = errorOf(() => parseDuration(text, 'schedule.every'));
    expect(error.code).toBe('invalid_input');
    expect(error.field).toBe('schedule.every');
    expect(error.message).toMatch(/^schedule\.every: /);
    expect(error.message).toMatch(message);
  });
});

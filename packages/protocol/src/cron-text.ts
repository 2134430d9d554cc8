import type { CronSchedule } from './cron.ts';
import { MolfError } from './errors.ts';

/** How long `onAsk: wait` waits for a person when the job does not say. */
export const DEFAULT_CRON_ON_ASK_WAIT_MS = 10 * 60_000;

const FORMAT_UNITS = [
  ['d', 86_400_000],
  ['h', 3_600_000],
  ['m', 60_000],
  ['s', 1_000],
] as const;

/** A duration in the largest unit that divides it: `90m`, `36h`, `1500ms`. */
export function formatCronDuration(ms: number): string {
  for (const [unit, unitMs] of FORMAT_UNITS) {
    if (ms % unitMs === 0) return `${ms / unitMs}${unit}`;
  }
  return `${ms}ms`;
}

/** `2026-11-24T09:00:00.000Z` → `2026-11-24 09:00 UTC`, with seconds when there are any. */
export function formatUtcTime(time: Date | string): string {
  const date = typeof time === 'string' ? new Date(time) : time;
  if (Number.isNaN(date.getTime())) return String(time);
  const iso = date.toISOString();
  const seconds = iso.slice(17, 19);
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)}${seconds === '00' ? '' : `:${seconds}`} UTC`;
}

/**
 * A schedule in a few words, as approvals, the model's `cron` tool and `molf cron list` show it:
 * `at 2026-11-24 09:00 UTC`, `every 30m`, `cron "0 9 * * 1-5" (Europe/Berlin)`.
 */
export function describeCronSchedule(schedule: CronSchedule): string {
  switch (schedule.kind) {
    case 'at':
      return `at ${formatUtcTime(schedule.at)}`;
    case 'every':
      return `every ${formatCronDuration(schedule.everyMs)}`;
    case 'cron':
      return `cron "${schedule.expression}" (${schedule.timezone})`;
  }
}

/** Duration units, as written after the number. Lower case only: `5M` could as well mean months. */
const DURATION_UNITS: Readonly<Record<string, number>> = {
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 7 * 86_400_000,
};

/** The longest duration: a year (with a leap day). Longer ones are typos (`5000d`) more often than plans. */
export const MAX_DURATION_MS = 366 * 86_400_000;

/** A number (decimals allowed, a sign only so that `-1m` gets its own message) and a unit. */
const DURATION = /^(?<sign>-?)(?<amount>\d+(?:\.\d+)?|\.\d+)\s*(?<unit>[a-zA-Z]*)$/;

/**
 * Milliseconds in a duration such as `30s`, `5m`, `2h`, `1d` or `1w`; decimals allowed (`1.5h`),
 * surrounding whitespace ignored. Throws `invalid_input` naming `field` for an empty text, a
 * number without unit or with an unknown one, zero, a negative duration and one over 366 days.
 */
export function parseDuration(text: string, field: string): number {
  const trimmed = text.trim();
  if (trimmed === '') {
    throw durationError(field, 'give a duration, such as 30s, 5m, 2h or 1d');
  }
  const groups = DURATION.exec(trimmed)?.groups;
  if (groups === undefined) {
    throw durationError(
      field,
      `"${trimmed}" is not a duration: write a number and a unit, as in 30s, 5m, 2h, 1d or 1.5h`,
    );
  }
  const { sign = '', amount = '', unit = '' } = groups;
  if (sign === '-') {
    throw durationError(field, `a duration is positive, not "${trimmed}"`);
  }
  if (unit === '') {
    throw durationError(field, `"${trimmed}" has no unit: write ${amount}s, ${amount}m, ${amount}h or ${amount}d`);
  }
  const unitMs = DURATION_UNITS[unit];
  if (unitMs === undefined) {
    throw durationError(field, `"${trimmed}" has an unknown unit "${unit}": use s, m, h, d or w (seconds to weeks)`);
  }
  const exact = Number(amount) * unitMs;
  if (exact > MAX_DURATION_MS) {
    throw durationError(field, `"${trimmed}" is longer than the longest duration, 366d`);
  }
  const ms = Math.round(exact);
  if (ms <= 0) {
    throw durationError(field, `a duration is more than zero, not "${trimmed}"`);
  }
  return ms;
}

function durationError(field: string, message: string): MolfError {
  return new MolfError('invalid_input', `${field}: ${message}`, { field });
}

import {
  type CronSchedule,
  type CronScheduleInput,
  formatCronDuration,
  formatUtcTime,
  MolfError,
  parseDuration,
} from '@molf/protocol';
import { Cron, CronPattern } from 'croner';

// Schedules as pure functions: what a person or the model wrote, checked and resolved to what is
// stored, and the slots a stored schedule gives. No timers and no clock: every function is given
// `now` or `after`, so the scheduler and the tests decide what time it is.

const SECOND_MS = 1_000;
const MINUTE_MS = 60 * SECOND_MS;
const HOUR_MS = 60 * MINUTE_MS;

/** What could be meant as a duration rather than a time: it starts like a number. */
const LOOKS_LIKE_DURATION = /^-?\.?\d/;

/**
 * An ISO 8601 date and time of day (`T`, `t` or a space between), seconds and fractions optional,
 * with an optional `Z` or `±hh:mm` offset: parsed here, so that a missing offset and an impossible
 * date (`02-30`, which `Date.parse` rolls over to March) each get their own message.
 */
const ISO_TIME =
  /^(?<year>\d{4})-(?<month>\d{2})-(?<day>\d{2})(?:[Tt ](?<hour>\d{2}):(?<minute>\d{2})(?::(?<second>\d{2})(?:\.(?<fraction>\d{1,9}))?)?(?:(?<zulu>[Zz])|(?<offsetSign>[+-])(?<offsetHours>\d{2}):?(?<offsetMinutes>\d{2}))?)?$/;

/** Cron expressions have 5 fields (minute first) or 6 (second first); croner reads years too, we do not. */
const CRON_MODE = '5-or-6-parts';

/** What a missed slot does after the server was down over it (`CronJob.missed`). */
export type MissedPolicy = 'run_once' | 'skip';

/**
 * The stored form of a schedule as written. Exactly one of `at`, `every` and `cron` (else an
 * error on `schedule`); `anchor` only with `every`, `tz` only with `cron`.
 *
 * - `at`: an ISO 8601 time *with* `Z` or an offset (`2026-11-24T09:00:00+01:00`), or a duration from
 *   `now` (`20m`). A time without offset is refused rather than guessed: the server's zone and the
 *   writer's may differ, and reading it as UTC would be off by hours without a word. A time at or
 *   before `now` is refused.
 * - `every`: a duration of at least `minIntervalMs`; `anchor` (an ISO time with offset, default
 *   `now`) fixes the phase: slots are `anchor + k × every`.
 * - `cron`: a 5- or 6-field expression (or a croner nickname such as `@daily`), read in `tz` (an
 *   IANA zone, default `defaultTimezone`). Refused when croner refuses it, when it never fires
 *   (`0 0 30 2 *`), and when two runs come closer than `minIntervalMs` (from its second, minute and
 *   hour fields, as if each day matched: the same limit as `every`, which `* * * * * *` would
 *   otherwise get around).
 *
 * Times are stored as ISO 8601 in UTC (`toISOString()`). Errors are `invalid_input` with the field
 * (`schedule`, `schedule.at`, `schedule.every`, `schedule.anchor`, `schedule.cron`, `schedule.tz`).
 */
export function resolveSchedule(
  input: CronScheduleInput,
  options: { now: Date; defaultTimezone: string; minIntervalMs: number },
): CronSchedule {
  const { now } = options;
  const kinds = (['at', 'every', 'cron'] as const).filter((kind) => input[kind] !== undefined);
  if (kinds.length !== 1) {
    throw invalid(
      'schedule',
      kinds.length === 0
        ? 'give one of at (a time or a duration from now), every (a duration) or cron (an expression)'
        : `give only one of at, every and cron, not ${kinds.join(' and ')}`,
    );
  }
  if (input.anchor !== undefined && input.every === undefined) {
    throw invalid('schedule.anchor', 'an anchor applies only to an `every` schedule');
  }
  if (input.tz !== undefined && input.cron === undefined) {
    throw invalid('schedule.tz', 'a time zone applies only to a `cron` schedule');
  }

  if (input.at !== undefined) {
    const at = parseTimeOrDuration(input.at, { now, field: 'schedule.at' });
    if (at.getTime() <= now.getTime()) {
      throw invalid(
        'schedule.at',
        `${formatUtcTime(at)} is in the past (it is now ${formatUtcTime(now)}): give a later time or a duration from now`,
      );
    }
    return { kind: 'at', at: at.toISOString() };
  }

  if (input.every !== undefined) {
    const everyMs = parseDuration(input.every, 'schedule.every');
    if (everyMs < options.minIntervalMs) {
      throw invalid(
        'schedule.every',
        `every ${formatCronDuration(everyMs)} is too often: ${minimumNote(options.minIntervalMs)}`,
      );
    }
    const anchor = input.anchor === undefined ? now : parseIsoTime(input.anchor, 'schedule.anchor');
    return { kind: 'every', everyMs, anchor: anchor.toISOString() };
  }

  const expression = (input.cron ?? '').trim();
  const timezone = checkTimezone(input.tz?.trim() ?? options.defaultTimezone, input.tz !== undefined);
  const cron = parseCron(expression, timezone);
  if (cron.nextRun(now) === null) {
    throw invalid('schedule.cron', `"${expression}" never runs (is it a date that does not exist, like 30 February?)`);
  }
  const shortestGapMs = shortestCronGapMs(expression);
  if (shortestGapMs < options.minIntervalMs) {
    throw invalid(
      'schedule.cron',
      `"${expression}" runs as often as every ${formatCronDuration(shortestGapMs)}: ${minimumNote(options.minIntervalMs)}`,
    );
  }
  return { kind: 'cron', expression, timezone };
}

/**
 * The time a job stops, from what was written: an ISO 8601 time with offset, or a duration from
 * `now` (`3d`); as ISO 8601 in UTC. Throws `invalid_input` on `until` when it is not later than `now`.
 */
export function resolveUntil(text: string, now: Date): string {
  const until = parseTimeOrDuration(text, { now, field: 'until' });
  if (until.getTime() <= now.getTime()) {
    throw invalid('until', `${formatUtcTime(until)} is in the past (it is now ${formatUtcTime(now)})`);
  }
  return until.toISOString();
}

/**
 * The schedule's first slot strictly after `after`, or undefined when there is none:
 * - `at`: its time, when later than `after`;
 * - `every`: the smallest `anchor + k × everyMs` later than `after`, with k ≥ 0 (no slot before the
 *   anchor: before it, the anchor itself is the first);
 * - `cron`: croner's next run in the schedule's zone. Croner follows Vixie cron at DST changes: a
 *   fixed time (one value each in seconds, minutes and hours, `30 2 * * *`) that a spring-forward
 *   skips runs at the first time after the gap, one that fall-back repeats runs once, at the first
 *   occurrence; other expressions (`*\/30 2 * * *`, `0 2,3 * * *`) skip the gap and run in both
 *   passes of a repeated hour.
 */
export function nextRunAfter(schedule: CronSchedule, after: Date): Date | undefined {
  switch (schedule.kind) {
    case 'at': {
      const at = new Date(schedule.at);
      return at.getTime() > after.getTime() ? at : undefined;
    }
    case 'every': {
      const anchorMs = Date.parse(schedule.anchor);
      if (after.getTime() < anchorMs) return new Date(anchorMs);
      const latest = latestEverySlotMs(anchorMs, schedule.everyMs, after.getTime());
      return new Date(latest + schedule.everyMs);
    }
    case 'cron':
      return createCron(schedule.expression, schedule.timezone).nextRun(after) ?? undefined;
  }
}

/**
 * What a job does when the server starts again (or a job is enabled again) after `lastSlot`:
 * `runNow` is the slot to run at once, if any (the run's `scheduledFor`); `next` is the first slot
 * after `now` to wait for.
 *
 * `lastSlot` is the last slot that ran or was handled (skipped, failed for good). Before the first
 * run, pass when the schedule was set (the job made or its schedule changed), so that a first slot
 * missed while the server was down counts. Missed slots are those in `(lastSlot, now]`.
 *
 * - `at`: its time, unless `lastSlot` is at or after it (it ran). Missed, it runs now, whatever
 *   `policy` says: skipping a one-off job would mean it never runs and nobody hears of it. With
 *   `lastSlot` undefined it has not run.
 * - `every` and `cron`, `run_once`: one run now for all the missed slots, as the latest of them;
 *   then on schedule. `skip`: no run now. With `lastSlot` undefined no slot counts as missed: a cron
 *   expression has slots back to any past, and without a bound every job would look late.
 */
export function dueAfterDowntime(
  schedule: CronSchedule,
  options: { lastSlot: Date | undefined; now: Date; policy: MissedPolicy },
): { runNow: Date | undefined; next: Date | undefined } {
  const { lastSlot, now, policy } = options;
  if (schedule.kind === 'at') {
    const at = new Date(schedule.at);
    if (lastSlot !== undefined && lastSlot.getTime() >= at.getTime()) return { runNow: undefined, next: undefined };
    return at.getTime() <= now.getTime() ? { runNow: at, next: undefined } : { runNow: undefined, next: at };
  }
  const next = nextRunAfter(schedule, now);
  if (lastSlot === undefined || policy === 'skip') return { runNow: undefined, next };
  const latest = latestSlotAtOrBefore(schedule, now);
  const missed = latest !== undefined && latest.getTime() > lastSlot.getTime();
  return { runNow: missed ? latest : undefined, next };
}

function invalid(field: string, message: string): MolfError {
  return new MolfError('invalid_input', `${field}: ${message}`, { field });
}

function minimumNote(minIntervalMs: number): string {
  return `the shortest interval is ${formatCronDuration(minIntervalMs)} (the server's configuration can lower it)`;
}

/** An ISO 8601 time (anything starting like `2026-`) or, else, a duration from `now`. */
function parseTimeOrDuration(text: string, options: { now: Date; field: string }): Date {
  const trimmed = text.trim();
  if (/^\d{4}-/.test(trimmed)) return parseIsoTime(trimmed, options.field);
  if (!LOOKS_LIKE_DURATION.test(trimmed)) {
    throw invalid(
      options.field,
      `"${trimmed}" is neither an ISO 8601 time (2026-11-24T09:00:00Z) nor a duration from now (20m, 2h, 1d)`,
    );
  }
  return new Date(options.now.getTime() + parseDuration(trimmed, options.field));
}

/** An ISO 8601 date and time with `Z` or an offset; see {@link resolveSchedule} on why the offset. */
function parseIsoTime(text: string, field: string): Date {
  const trimmed = text.trim();
  const example = '2026-11-24T09:00:00Z or 2026-11-24T09:00:00+01:00';
  const parts = ISO_TIME.exec(trimmed)?.groups;
  if (parts === undefined) {
    throw invalid(field, `"${trimmed}" is not an ISO 8601 time, such as ${example}`);
  }
  if (parts.hour === undefined) {
    throw invalid(field, `"${trimmed}" has no time of day: write, for example, ${trimmed}T09:00:00Z`);
  }
  if (parts.zulu === undefined && parts.offsetSign === undefined) {
    throw invalid(field, `"${trimmed}" has no offset: add Z for UTC or an offset such as +01:00 (${example})`);
  }
  const number = (value: string | undefined) => Number(value ?? '0');
  const [year, month, day] = [number(parts.year), number(parts.month), number(parts.day)];
  const [hour, minute, second] = [number(parts.hour), number(parts.minute), number(parts.second)];
  const ms = Math.floor(Number(`0.${parts.fraction ?? '0'}`) * 1000);
  const date = new Date(0);
  // setUTCFullYear, not Date.UTC: Date.UTC reads years 0-99 as 1900-1999.
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, ms);
  const exists =
    date.getUTCFullYear() === year &&
    date.getUTCMonth() === month - 1 &&
    date.getUTCDate() === day &&
    date.getUTCHours() === hour &&
    date.getUTCMinutes() === minute &&
    date.getUTCSeconds() === second;
  const offsetHours = number(parts.offsetHours);
  const offsetMinutes = number(parts.offsetMinutes);
  if (!exists || offsetHours > 23 || offsetMinutes > 59) {
    throw invalid(field, `"${trimmed}" is not a time that exists`);
  }
  const offsetMs = (parts.offsetSign === '-' ? -1 : 1) * (offsetHours * HOUR_MS + offsetMinutes * MINUTE_MS);
  return new Date(date.getTime() - offsetMs);
}

/** The zone if `Intl` knows it (croner reads zones through `Intl` too, but only once it computes a run). */
function checkTimezone(timezone: string, written: boolean): string {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone });
    return timezone;
  } catch {
    const whose = written ? `"${timezone}"` : `the server's time zone "${timezone}"`;
    throw invalid('schedule.tz', `${whose} is not an IANA time zone, such as Europe/Berlin, America/New_York or UTC`);
  }
}

function parseCron(expression: string, timezone: string): Cron {
  // Croner takes a pattern with a colon for a one-off ISO time: that is what `at` is for.
  if (expression.includes(':')) {
    throw invalid('schedule.cron', `"${expression}" is a time, not a cron expression: use at for a single run`);
  }
  try {
    return createCron(expression, timezone);
  } catch (error) {
    const reason = error instanceof Error ? error.message.replace(/^CronPattern: /, '') : String(error);
    throw new MolfError('invalid_input', `schedule.cron: "${expression}" is not a cron expression: ${reason}`, {
      field: 'schedule.cron',
      cause: error,
    });
  }
}

function createCron(expression: string, timezone: string): Cron {
  return new Cron(expression, { timezone, paused: true, mode: CRON_MODE });
}

/**
 * The shortest time between two runs of a valid expression, from its second, minute and hour
 * fields taken as times of day, the last of one day followed by the first of the next. It ignores
 * the day fields (so it may be shorter than any real gap, never longer) and the hour a fall-back
 * repeats.
 */
function shortestCronGapMs(expression: string): number {
  const pattern = new CronPattern(expression, undefined, { mode: CRON_MODE });
  let shortestSeconds = Number.POSITIVE_INFINITY;
  let first: number | undefined;
  let previous: number | undefined;
  for (let hour = 0; hour < 24; hour += 1) {
    if (!pattern.hour[hour]) continue;
    for (let minute = 0; minute < 60; minute += 1) {
      if (!pattern.minute[minute]) continue;
      for (let second = 0; second < 60; second += 1) {
        if (!pattern.second[second]) continue;
        const time = hour * 3600 + minute * 60 + second;
        if (previous !== undefined) shortestSeconds = Math.min(shortestSeconds, time - previous);
        first ??= time;
        previous = time;
      }
    }
  }
  if (first !== undefined && previous !== undefined) {
    shortestSeconds = Math.min(shortestSeconds, first + 24 * 3600 - previous);
  }
  return shortestSeconds * SECOND_MS;
}

/** The largest `anchorMs + k × everyMs` (k ≥ 0) at or before `timeMs`, which is not before the anchor. */
function latestEverySlotMs(anchorMs: number, everyMs: number, timeMs: number): number {
  let slot = anchorMs + Math.floor((timeMs - anchorMs) / everyMs) * everyMs;
  // The division is in floating point: put an off-by-one right.
  while (slot > timeMs) slot -= everyMs;
  while (slot + everyMs <= timeMs) slot += everyMs;
  return slot;
}

/** The schedule's last slot at or before `time`, or undefined when there is none. */
function latestSlotAtOrBefore(schedule: CronSchedule, time: Date): Date | undefined {
  switch (schedule.kind) {
    case 'at':
      return Date.parse(schedule.at) <= time.getTime() ? new Date(schedule.at) : undefined;
    case 'every': {
      const anchorMs = Date.parse(schedule.anchor);
      if (time.getTime() < anchorMs) return undefined;
      return new Date(latestEverySlotMs(anchorMs, schedule.everyMs, time.getTime()));
    }
    case 'cron': {
      // Croner's previous runs are strictly before the reference, but include a run earlier in the
      // same second: a millisecond later takes in a run exactly at `time` and nothing after it.
      const [latest] = createCron(schedule.expression, schedule.timezone).previousRuns(1, new Date(time.getTime() + 1));
      return latest !== undefined && latest.getTime() <= time.getTime() ? latest : undefined;
    }
  }
}

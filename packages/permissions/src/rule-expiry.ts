/** `YYYY-MM-DDTHH:MM[:SS[.fff…]]` and `Z` or an offset `±HH:MM`. */
const EXPIRY_FORMAT =
  /^(?<year>\d{4})-(?<month>\d{2})-(?<day>\d{2})T(?<hour>\d{2}):(?<minute>\d{2})(?::(?<second>\d{2})(?:\.\d{1,9})?)?(?:Z|[+-](?<offsetHour>\d{2}):(?<offsetMinute>\d{2}))$/;

/**
 * A rule's `expires`: an ISO 8601 date and time with `Z` or an offset, as ms since the epoch.
 * Stricter than `Date.parse`, which takes `2026-02-30` for March 2nd and guesses at other formats:
 * a time that limits a permission must mean exactly what it says.
 */
export function safeParseRuleExpiry(text: string): { ok: true; value: number } | { ok: false; message: string } {
  const parts = EXPIRY_FORMAT.exec(text)?.groups;
  if (parts === undefined) return { ok: false, message: 'not an ISO 8601 date and time with "Z" or an offset' };
  const number = (name: string) => Number(parts[name] ?? '0');
  const daysInMonth = new Date(Date.UTC(number('year'), number('month'), 0)).getUTCDate();
  const valid =
    number('month') >= 1 &&
    number('month') <= 12 &&
    number('day') >= 1 &&
    number('day') <= daysInMonth &&
    number('hour') <= 23 &&
    number('minute') <= 59 &&
    number('second') <= 59 &&
    number('offsetHour') <= 23 &&
    number('offsetMinute') <= 59;
  return valid ? { ok: true, value: Date.parse(text) } : { ok: false, message: 'no such date or time' };
}

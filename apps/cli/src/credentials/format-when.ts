/** How far `iso` is from `now` in the largest whole unit: `3 min ago`, `in 4 min`, `2 d ago`, `just now`. */
export function formatRelativeTime(iso: string, now: number): string {
  const ms = Date.parse(iso) - now;
  const distance = Math.abs(ms);
  if (Number.isNaN(distance)) return iso;
  if (distance < 1_000) return 'just now';
  const text =
    distance < 60_000
      ? `${Math.floor(distance / 1_000)} s`
      : distance < 3_600_000
        ? `${Math.floor(distance / 60_000)} min`
        : distance < 86_400_000
          ? `${Math.floor(distance / 3_600_000)} h`
          : `${Math.floor(distance / 86_400_000)} d`;
  return ms < 0 ? `${text} ago` : `in ${text}`;
}

/** A time for a table: relative, then ISO 8601 to the second: `3 min ago (2026-05-01T10:01:00Z)`. */
export function formatWhen(iso: string, now: number): string {
  return `${formatRelativeTime(iso, now)} (${toIsoSecond(iso)})`;
}

/** An ISO 8601 time to the second: `2026-05-01T10:01:00Z`. */
export function toIsoSecond(iso: string): string {
  return iso.replace(/\.\d+Z$/, 'Z');
}

import { describe, expect, it } from 'vitest';
import { formatRelativeTime, formatWhen } from './format-when.ts';

const NOW = Date.parse('2026-05-01T10:00:00Z');

describe('times in tables', () => {
  it.each([
    ['2026-05-01T10:00:00.400Z', 'just now'],
    ['2026-05-01T09:59:30Z', '30 s ago'],
    ['2026-05-01T09:57:00Z', '3 min ago'],
    ['2026-05-01T10:04:10Z', 'in 4 min'],
    ['2026-05-01T07:00:00Z', '3 h ago'],
    ['2026-04-28T10:00:00Z', '3 d ago'],
  ])('says %s as "%s"', (iso, words) => {
    expect(formatRelativeTime(iso, NOW)).toBe(words);
  });

  it('adds the ISO time to the second', () => {
    expect(formatWhen('2026-05-01T09:57:00.000Z', NOW)).toBe('3 min ago (2026-05-01T09:57:00Z)');
  });
});

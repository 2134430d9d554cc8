import { describe, expect, it } from 'vitest';
import { createBackoff } from './backoff.ts';

describe('createBackoff', () => {
  it('starts at 1 s, doubles, and stops growing at 30 s', () => {
    const delay = createBackoff({ random: () => 0.5 });
    expect([0, 1, 2, 3, 4, 5, 6, 10].map(delay)).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000]);
  });

  it('spreads each delay by at most ±25 %', () => {
    expect(createBackoff({ random: () => 0 })(0)).toBe(750);
    expect(createBackoff({ random: () => 1 })(0)).toBe(1_250);
    expect(createBackoff({ random: () => 1 })(20)).toBe(37_500);
  });
});

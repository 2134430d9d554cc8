import { describe, expect, it } from 'vitest';
import { addCallUsage, addUsageTotals, emptyUsageTotals, roundUsd } from './usage.ts';

describe('usage totals', () => {
  it('adds calls token by token and their costs to the cent fraction a person would write', () => {
    let totals = emptyUsageTotals();
    totals = addCallUsage(totals, { inputTokens: 1_000, outputTokens: 500, costUsd: 0.003, costSource: 'config' });
    totals = addCallUsage(totals, {
      inputTokens: 2_000,
      outputTokens: 100,
      cacheReadTokens: 1_500,
      costUsd: 0.0075,
      costSource: 'provider',
    });
    expect(totals).toEqual({ inputTokens: 3_000, outputTokens: 600, cacheReadTokens: 1_500, costUsd: 0.0105 });
  });

  it('counts a call without a known cost apart instead of as free, and a message without usage not at all', () => {
    let totals = addCallUsage(emptyUsageTotals(), { inputTokens: 10, outputTokens: 5 });
    expect(totals).toEqual({ inputTokens: 10, outputTokens: 5, unpricedCalls: 1 });
    expect(totals.costUsd).toBeUndefined();
    totals = addCallUsage(totals, undefined);
    expect(totals).toEqual({ inputTokens: 10, outputTokens: 5, unpricedCalls: 1 });
    totals = addCallUsage(totals, { inputTokens: 1, outputTokens: 1, costUsd: 0.25 });
    expect(totals).toEqual({ inputTokens: 11, outputTokens: 6, unpricedCalls: 1, costUsd: 0.25 });
  });

  it('adds two totals, keeping a cost only where one is known', () => {
    const priced = { inputTokens: 100, outputTokens: 10, costUsd: 0.1, cacheWriteTokens: 40 };
    const unpriced = { inputTokens: 50, outputTokens: 5, unpricedCalls: 2 };
    expect(addUsageTotals(priced, unpriced)).toEqual({
      inputTokens: 150,
      outputTokens: 15,
      cacheWriteTokens: 40,
      costUsd: 0.1,
      unpricedCalls: 2,
    });
    expect(addUsageTotals(unpriced, unpriced)).toEqual({ inputTokens: 100, outputTokens: 10, unpricedCalls: 4 });
    expect(addUsageTotals(priced, { ...priced, costUsd: 0.2 }).costUsd).toBe(0.3);
  });

  it('rounds dollar amounts to 1e-10, so that sums compare equal to their decimal figure', () => {
    expect(0.1 + 0.2).not.toBe(0.3);
    expect(roundUsd(0.1 + 0.2)).toBe(0.3);
    expect(roundUsd(0.000_000_000_04)).toBe(0);
    expect(roundUsd(1_234.567_890_123_4)).toBe(1_234.567_890_123_4);
  });
});

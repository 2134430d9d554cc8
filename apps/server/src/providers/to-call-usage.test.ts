import { describe, expect, it } from 'vitest';
import { toCallUsage } from './to-call-usage.ts';

const sonnet = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 };

describe('the cost of a model call', () => {
  it('prices input and output tokens per million', () => {
    expect(toCallUsage({ inputTokens: 1_000, outputTokens: 500 }, sonnet)).toEqual({
      inputTokens: 1_000,
      outputTokens: 500,
      costUsd: 0.0105,
      costSource: 'config',
    });
    expect(toCallUsage({ inputTokens: 2_000_000, outputTokens: 1_000_000 }, { input: 1.25, output: 10 }).costUsd).toBe(
      12.5,
    );
  });

  it('prices cache reads and writes at their own price, the uncached rest at the input price', () => {
    // 10,000 in: 6,000 read from the cache, 3,000 written to it, 1,000 plain; 200 out.
    const usage = toCallUsage(
      { inputTokens: 10_000, outputTokens: 200, cacheReadTokens: 6_000, cacheWriteTokens: 3_000 },
      sonnet,
    );
    // 1,000 × 3 + 6,000 × 0.3 + 3,000 × 3.75 + 200 × 15 = 3,000 + 1,800 + 11,250 + 3,000 = 19,050 per million
    expect(usage).toEqual({
      inputTokens: 10_000,
      outputTokens: 200,
      cacheReadTokens: 6_000,
      cacheWriteTokens: 3_000,
      costUsd: 0.01905,
      costSource: 'config',
    });
  });

  it('prices cache tokens at the input price when the price gives none for them', () => {
    const usage = toCallUsage({ inputTokens: 1_000, outputTokens: 0, cacheReadTokens: 800 }, { input: 2, output: 8 });
    expect(usage.costUsd).toBe(0.002);
  });

  it('takes the provider’s own figure over the configured price', () => {
    expect(toCallUsage({ inputTokens: 1_000, outputTokens: 500, costUsd: 0.0042 }, sonnet)).toEqual({
      inputTokens: 1_000,
      outputTokens: 500,
      costUsd: 0.0042,
      costSource: 'provider',
    });
    expect(toCallUsage({ inputTokens: 1, outputTokens: 1, costUsd: 0 }, undefined)).toMatchObject({
      costUsd: 0,
      costSource: 'provider',
    });
  });

  it('leaves the cost out, never zero, without a price or without the token counts', () => {
    expect(toCallUsage({ inputTokens: 1_000, outputTokens: 500 }, undefined)).toEqual({
      inputTokens: 1_000,
      outputTokens: 500,
    });
    expect(toCallUsage({ inputTokens: 1_000 }, sonnet)).toEqual({ inputTokens: 1_000 });
  });

  it('keeps a free model’s cost as a known zero', () => {
    expect(toCallUsage({ inputTokens: 5_000, outputTokens: 900 }, { input: 0, output: 0 })).toMatchObject({
      costUsd: 0,
      costSource: 'config',
    });
  });
});

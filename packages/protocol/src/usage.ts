import { z } from 'zod';

const TokenCountSchema = z.number().int().nonnegative();

/**
 * What one model call used, as stored on its message. Token counts are the provider's; absent
 * when it reported none.
 */
export const CallUsageSchema = z.object({
  /** Every input (prompt) token, cached ones included. */
  inputTokens: TokenCountSchema.optional(),
  outputTokens: TokenCountSchema.optional(),
  /** Of `inputTokens`, those read from the provider's prompt cache. */
  cacheReadTokens: TokenCountSchema.optional(),
  /** Of `inputTokens`, those written to the provider's prompt cache. */
  cacheWriteTokens: TokenCountSchema.optional(),
  /** The call's cost in US dollars; absent when neither the provider reported it nor the config prices the model. */
  costUsd: z.number().nonnegative().optional(),
  /** Where `costUsd` comes from: the provider's own figure (OpenRouter's), or the server config's prices. */
  costSource: z.enum(['provider', 'config']).optional(),
});
export type CallUsage = z.infer<typeof CallUsageSchema>;

/**
 * The sum of several model calls (a turn's, a session's): each stored message that carries a usage
 * is one call.
 */
export const UsageTotalsSchema = z.object({
  inputTokens: TokenCountSchema,
  outputTokens: TokenCountSchema,
  /** Of `inputTokens`, read from prompt caches; absent when none. */
  cacheReadTokens: TokenCountSchema.optional(),
  /** Of `inputTokens`, written to prompt caches; absent when none. */
  cacheWriteTokens: TokenCountSchema.optional(),
  /** The cost of the calls whose cost is known, in US dollars; absent when no call's cost is known. */
  costUsd: z.number().nonnegative().optional(),
  /** How many calls had no known cost (`costUsd` leaves them out); absent when none. */
  unpricedCalls: TokenCountSchema.optional(),
});
export type UsageTotals = z.infer<typeof UsageTotalsSchema>;

/**
 * Dollar amounts are kept to 1e-10 USD: a sum of call costs then equals the decimal figure a
 * person adds up (0.003 + 0.0075 is 0.0105, not 0.010499999999999999).
 */
export function roundUsd(amount: number): number {
  return Math.round(amount * 1e10) / 1e10;
}

export function emptyUsageTotals(): UsageTotals {
  return { inputTokens: 0, outputTokens: 0 };
}

function addOptional(left: number | undefined, right: number | undefined): number | undefined {
  const sum = (left ?? 0) + (right ?? 0);
  return sum === 0 ? undefined : sum;
}

function withOptional(
  totals: UsageTotals,
  key: 'cacheReadTokens' | 'cacheWriteTokens' | 'unpricedCalls',
  value: number | undefined,
) {
  if (value === undefined) delete totals[key];
  else totals[key] = value;
}

/**
 * `totals` with one more call counted (a new object). A message without a usage (a call cut short
 * before the provider reported it, or no model call at all) adds nothing.
 */
export function addCallUsage(totals: UsageTotals, usage: CallUsage | undefined): UsageTotals {
  if (usage === undefined) return totals;
  const next: UsageTotals = {
    ...totals,
    inputTokens: totals.inputTokens + (usage.inputTokens ?? 0),
    outputTokens: totals.outputTokens + (usage.outputTokens ?? 0),
  };
  withOptional(next, 'cacheReadTokens', addOptional(totals.cacheReadTokens, usage.cacheReadTokens));
  withOptional(next, 'cacheWriteTokens', addOptional(totals.cacheWriteTokens, usage.cacheWriteTokens));
  if (usage.costUsd === undefined) withOptional(next, 'unpricedCalls', (totals.unpricedCalls ?? 0) + 1);
  else next.costUsd = roundUsd((totals.costUsd ?? 0) + usage.costUsd);
  return next;
}

/** The sum of two totals (a new object). */
export function addUsageTotals(left: UsageTotals, right: UsageTotals): UsageTotals {
  const next: UsageTotals = {
    inputTokens: left.inputTokens + right.inputTokens,
    outputTokens: left.outputTokens + right.outputTokens,
  };
  withOptional(next, 'cacheReadTokens', addOptional(left.cacheReadTokens, right.cacheReadTokens));
  withOptional(next, 'cacheWriteTokens', addOptional(left.cacheWriteTokens, right.cacheWriteTokens));
  withOptional(next, 'unpricedCalls', addOptional(left.unpricedCalls, right.unpricedCalls));
  if (left.costUsd !== undefined || right.costUsd !== undefined) {
    next.costUsd = roundUsd((left.costUsd ?? 0) + (right.costUsd ?? 0));
  }
  return next;
}

import { type CallUsage, roundUsd } from '@molf/protocol';
import type { LanguageModelUsage } from 'ai';
import type { ModelPrice } from './model-prices.ts';

/** Token counts of one model call as the provider reported them, and the cost if it reported one. */
export type ReportedUsage = {
  /** Every input token, cached ones included. */
  inputTokens?: number | undefined;
  outputTokens?: number | undefined;
  cacheReadTokens?: number | undefined;
  cacheWriteTokens?: number | undefined;
  /** The provider's own figure for the call, in US dollars (OpenRouter's `usage.cost`). */
  costUsd?: number | undefined;
};

/**
 * A call's token counts as the AI SDK gives them, and the provider's own cost figure where it gives
 * one: OpenRouter puts `cost` (in its credits, which are US dollars) into every response's usage,
 * which the SDK's OpenAI-compatible provider passes on in `raw`. No other provider Molf speaks to
 * reports a cost.
 */
export function toReportedUsage(usage: LanguageModelUsage): ReportedUsage {
  const { inputTokens, outputTokens, inputTokenDetails } = usage;
  const cost = usage.raw?.cost;
  return {
    ...(inputTokens === undefined ? {} : { inputTokens }),
    ...(outputTokens === undefined ? {} : { outputTokens }),
    ...(inputTokenDetails?.cacheReadTokens === undefined ? {} : { cacheReadTokens: inputTokenDetails.cacheReadTokens }),
    ...(inputTokenDetails?.cacheWriteTokens === undefined
      ? {}
      : { cacheWriteTokens: inputTokenDetails.cacheWriteTokens }),
    ...(typeof cost === 'number' && Number.isFinite(cost) && cost >= 0 ? { costUsd: cost } : {}),
  };
}

/**
 * What a call used, as its message keeps it, with its cost: the provider's own figure when it gave
 * one, else the tokens at `price` (cache reads and writes at their price, else at the input price).
 * Without either, or without the token counts, the cost is left out: unknown, not zero.
 */
export function toCallUsage(reported: ReportedUsage, price: ModelPrice | undefined): CallUsage {
  const { inputTokens, outputTokens } = reported;
  const cacheReadTokens = positive(reported.cacheReadTokens);
  const cacheWriteTokens = positive(reported.cacheWriteTokens);
  const usage: CallUsage = {
    ...(inputTokens === undefined ? {} : { inputTokens }),
    ...(outputTokens === undefined ? {} : { outputTokens }),
    ...(cacheReadTokens === undefined ? {} : { cacheReadTokens }),
    ...(cacheWriteTokens === undefined ? {} : { cacheWriteTokens }),
  };
  if (reported.costUsd !== undefined) {
    return { ...usage, costUsd: roundUsd(reported.costUsd), costSource: 'provider' };
  }
  if (price === undefined || inputTokens === undefined || outputTokens === undefined) return usage;
  const read = cacheReadTokens ?? 0;
  const written = cacheWriteTokens ?? 0;
  const uncached = Math.max(0, inputTokens - read - written);
  const perMillion =
    uncached * price.input +
    read * (price.cacheRead ?? price.input) +
    written * (price.cacheWrite ?? price.input) +
    outputTokens * price.output;
  return { ...usage, costUsd: roundUsd(perMillion / 1_000_000), costSource: 'config' };
}

function positive(count: number | undefined): number | undefined {
  return count === undefined || count <= 0 ? undefined : count;
}

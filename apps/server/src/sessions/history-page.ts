import type { SessionMessage } from '@molf/protocol';

/** A part of a session's history, as `sessions.get` gives it. */
export type HistoryPage = { messages: SessionMessage[]; start: number; total: number };

/**
 * The last `limit` messages before `before` (every one without a limit). The page never starts
 * with a tool result: it starts earlier, at the call's message, so that a client shows each result
 * with its call however the history is cut.
 */
export function historyPage(
  history: readonly SessionMessage[],
  range: { limit?: number | undefined; before?: number | undefined },
): HistoryPage {
  const total = history.length;
  const end = Math.min(range.before ?? total, total);
  let start = range.limit === undefined ? 0 : Math.max(0, end - range.limit);
  while (start > 0 && history[start]?.role === 'tool') start -= 1;
  return { messages: history.slice(start, end), start, total };
}

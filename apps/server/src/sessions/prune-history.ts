import type { SessionMessage } from '@molf/protocol';

/** Characters per token, for estimates (no tokenizer needed to stay well clear of a limit). */
export const CHARS_PER_TOKEN = 4;

export const PRUNING = {
  /** From this share of the context window, large old tool results are trimmed… */
  softShare: 0.3,
  /** …to their head and tail. */
  trimAboveChars: 4_000,
  keepHeadChars: 1_500,
  keepTailChars: 1_500,
  /** From this share, old tool results are cleared, if that frees at least `minClearableChars`. */
  hardShare: 0.5,
  minClearableChars: 50_000,
  /** Tool results of the last this-many assistant messages are never touched. */
  protectedAssistantMessages: 3,
} as const;

export const CLEARED_NOTE = '[Old tool result content cleared to save context; run the tool again if you need it.]';

function sizeOf(message: SessionMessage): number {
  switch (message.role) {
    case 'user':
    case 'summary':
      return message.text.length;
    case 'assistant':
      return message.text.length + JSON.stringify(message.toolCalls).length;
    case 'tool':
      return message.output.length + (message.error?.length ?? 0);
  }
}

/**
 * What the model sees of a long history: old, large tool results trimmed (from 30 % of the
 * context window) or cleared (from 50 %), the recent ones kept whole. The stored history is never
 * changed; this is a view for one request.
 */
export function pruneHistory(
  history: readonly SessionMessage[],
  options: {
    contextTokens: number;
    /**
     * After the provider said the request is too long: every old tool result is cleared, whatever
     * the estimate, and old long prompts are cut to their head and tail.
     */
    aggressive?: boolean;
  },
): SessionMessage[] {
  const totalChars = history.reduce((sum, message) => sum + sizeOf(message), 0);
  const budgetChars = options.contextTokens * CHARS_PER_TOKEN;
  const aggressive = options.aggressive === true;
  if (!aggressive && totalChars < budgetChars * PRUNING.softShare) return [...history];

  // Tool results after the third-last assistant message belong to the recent steps: kept.
  let assistants = 0;
  let protectedFrom = 0;
  for (let index = history.length - 1; index >= 0; index -= 1) {
    if (history[index]?.role === 'assistant') {
      assistants += 1;
      if (assistants === PRUNING.protectedAssistantMessages) {
        protectedFrom = index;
        break;
      }
    }
  }
  // A loaded skill is instructions the model follows for the rest of the session: never pruned.
  const prunable = (index: number) => {
    const message = history[index];
    return index < protectedFrom && message?.role === 'tool' && message.toolName !== 'skill';
  };
  const clearableChars = history.reduce(
    (sum, message, index) => sum + (prunable(index) && message.role === 'tool' ? message.output.length : 0),
    0,
  );
  const clear =
    aggressive || (totalChars >= budgetChars * PRUNING.hardShare && clearableChars >= PRUNING.minClearableChars);
  const lastUser = history.findLastIndex((message) => message.role === 'user');

  return history.map((message, index) => {
    if (aggressive && message.role === 'user' && index !== lastUser && message.text.length > PRUNING.trimAboveChars) {
      const cut = message.text.length - PRUNING.keepHeadChars - PRUNING.keepTailChars;
      return {
        ...message,
        text: `${message.text.slice(0, PRUNING.keepHeadChars)}\n[… ${cut} characters of this old prompt cut to save context …]\n${message.text.slice(-PRUNING.keepTailChars)}`,
      };
    }
    if (!prunable(index) || message.role !== 'tool') return message;
    if (clear) return message.output === '' ? message : { ...message, output: CLEARED_NOTE };
    if (message.output.length <= PRUNING.trimAboveChars) return message;
    const cut = message.output.length - PRUNING.keepHeadChars - PRUNING.keepTailChars;
    return {
      ...message,
      output: `${message.output.slice(0, PRUNING.keepHeadChars)}\n[… ${cut} characters of this old tool result cut to save context …]\n${message.output.slice(-PRUNING.keepTailChars)}`,
    };
  });
}

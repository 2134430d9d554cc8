import type { SessionMessage } from '@molf/protocol';
import { SUMMARIZING, summarizeHistory } from '../sessions/summarize-history.ts';
import { toModelView } from './model-view.ts';
import type { TurnServices } from './turn-services.ts';

/**
 * After a turn whose last request filled most of the context window, older messages are
 * summarised (the recent turns stay in full). Returns the summary stored, if any. A failure is
 * logged; the turn already succeeded.
 */
export async function compactHistory(
  services: TurnServices,
  context: {
    sessionId: string;
    history: SessionMessage[];
    modelId: string;
    contextTokens: number;
    signal: AbortSignal;
  },
): Promise<Extract<SessionMessage, { role: 'summary' }> | undefined> {
  const lastAnswer = context.history.findLast((message) => message.role === 'assistant');
  const used = lastAnswer?.role === 'assistant' ? (lastAnswer.usage?.inputTokens ?? 0) : 0;
  if (used < context.contextTokens * SUMMARIZING.triggerShare) return undefined;
  try {
    const resolved = services.models.resolve({ prompt: context.modelId });
    const summary = await summarizeHistory({
      view: toModelView(context.history),
      model: resolved.model,
      modelId: context.modelId,
      price: resolved.price,
      signal: context.signal,
    });
    if (summary === undefined) return undefined;
    await services.store.append(context.sessionId, summary);
    context.history.push(summary);
    services.events.publish(context.sessionId, {
      type: 'context.compacted',
      summaryMessageId: summary.id,
      coversUntil: summary.coversUntil,
    });
    return summary;
  } catch (error) {
    services.logger.warn(
      { err: error, sessionId: context.sessionId },
      'summarising the session failed; it goes on unsummarised',
    );
    return undefined;
  }
}

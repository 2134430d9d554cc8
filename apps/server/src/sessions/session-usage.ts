import { addCallUsage, type CallUsage, emptyUsageTotals, type SessionMessage, type UsageTotals } from '@molf/protocol';

/** The usage of the model call a stored message records: an answer's or a summary's, when reported. */
export function usageOfMessage(message: SessionMessage): CallUsage | undefined {
  return message.role === 'assistant' || message.role === 'summary' ? message.usage : undefined;
}

/** The usage of every model call among `messages`: each message that records one counts once. */
export function sumMessageUsage(messages: readonly SessionMessage[]): UsageTotals {
  let totals = emptyUsageTotals();
  for (const message of messages) totals = addCallUsage(totals, usageOfMessage(message));
  return totals;
}

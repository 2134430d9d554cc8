import type { SessionMessage } from '@molf/protocol';
import type { ModelToolCall } from './run-model-step.ts';

/**
 * The tool calls a cut-off run of a turn left without results: those of the last model step after
 * the turn's prompt (`messageId`) that no stored result answers. A turn that runs for the first
 * time has none (nothing follows its prompt yet); one taken over after its server died finishes
 * them before it calls the model again.
 */
export function cutOffCalls(
  history: readonly SessionMessage[],
  messageId: string,
): { stepId: string; calls: ModelToolCall[] } | undefined {
  const promptAt = history.findLastIndex((message) => message.id === messageId);
  if (promptAt === -1) return undefined;
  const stepAt = history.findLastIndex((message, index) => index > promptAt && message.role === 'assistant');
  const step = history[stepAt];
  if (step === undefined || step.role !== 'assistant') return undefined;
  const answered = new Set(
    history.slice(stepAt + 1).flatMap((message) => (message.role === 'tool' ? [message.toolCallId] : [])),
  );
  const calls = step.toolCalls
    .filter((call) => !answered.has(call.toolCallId))
    .map((call) => ({ toolCallId: call.toolCallId, toolName: call.toolName, input: call.args }));
  return calls.length === 0 ? undefined : { stepId: step.id, calls };
}

import type { SessionMessage } from '@molf/protocol';
import type { ModelMessage } from 'ai';

/** How a summary message opens when the model sees it. */
export const SUMMARY_HEADER = '[Summary of the earlier conversation, which is no longer shown]';

/** How nested instructions appear in a read_file result (and how later turns recognise them). */
export const INSTRUCTIONS_MARKER = /^\[Instructions from (.+)\]$/gm;

/**
 * The part of the stored history the model sees: after the latest summary, that summary (and an
 * acknowledgement, so roles alternate) followed by every message after the ones it covers — the
 * recent turns it kept out stay in full.
 */
export function toModelView(history: readonly SessionMessage[]): SessionMessage[] {
  return pairToolResults(withLatestSummary(history));
}

/** The stored history as the model sees it. */
export function toModelMessages(messages: readonly SessionMessage[]): ModelMessage[] {
  return messages.map(toModelMessage);
}

/** The instruction files a view still shows the model (in read_file results not summarised or pruned away). */
export function instructionFilesShown(view: readonly SessionMessage[]): Set<string> {
  return new Set(
    view.flatMap((message) =>
      message.role === 'tool' && message.toolName === 'read_file'
        ? [...message.output.matchAll(INSTRUCTIONS_MARKER)].map((match) => match[1] as string)
        : [],
    ),
  );
}

function toModelMessage(message: SessionMessage): ModelMessage {
  switch (message.role) {
    case 'user':
      return { role: 'user', content: message.text };
    case 'summary':
      return { role: 'user', content: `${SUMMARY_HEADER}\n\n${message.text}` };
    case 'assistant':
      return {
        role: 'assistant',
        content: [
          ...(message.text === '' ? [] : [{ type: 'text' as const, text: message.text }]),
          ...message.toolCalls.map((call) => ({
            type: 'tool-call' as const,
            toolCallId: call.toolCallId,
            toolName: call.toolName,
            input: call.args,
          })),
        ],
      };
    case 'tool':
      return {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: message.toolCallId,
            toolName: message.toolName,
            // The model reads a failure's real text (what failed, what to try).
            output:
              message.error === undefined
                ? { type: 'text', value: message.output }
                : {
                    type: 'error-text',
                    value: message.output === '' ? message.error : `${message.output}\n${message.error}`,
                  },
          },
        ],
      };
  }
}

/**
 * Every tool call answered right after its assistant message, and no result without its call: a
 * crash between a call and its result (or a provider reusing ids) must not make the history
 * unusable, since providers refuse a call without a result. Missing results read "not run".
 */
function pairToolResults(view: readonly SessionMessage[]): SessionMessage[] {
  const paired: SessionMessage[] = [];
  let open = new Map<string, string>();
  const closeOpen = (at: string) => {
    for (const [toolCallId, toolName] of open) {
      paired.push({
        id: `${toolCallId}-missing`,
        at,
        role: 'tool',
        toolCallId,
        toolName,
        output: '',
        error: 'This tool call has no result: the server stopped before it finished. It may or may not have run.',
        errorKind: 'cancelled',
      });
    }
    open = new Map();
  };
  for (const message of view) {
    if (message.role === 'tool') {
      if (open.delete(message.toolCallId)) paired.push(message);
      continue;
    }
    closeOpen(message.at);
    paired.push(message);
    if (message.role === 'assistant') open = new Map(message.toolCalls.map((call) => [call.toolCallId, call.toolName]));
  }
  closeOpen(new Date().toISOString());
  return paired;
}

function withLatestSummary(history: readonly SessionMessage[]): SessionMessage[] {
  let summaryIndex = -1;
  for (let index = history.length - 1; index >= 0; index -= 1) {
    if (history[index]?.role === 'summary') {
      summaryIndex = index;
      break;
    }
  }
  if (summaryIndex === -1) return [...history];
  const summary = history[summaryIndex] as Extract<SessionMessage, { role: 'summary' }>;
  // Searched backwards from the summary: what it covers ends just before it, so a turn's cost does
  // not grow with the history's length.
  let covered = -1;
  for (let index = summaryIndex - 1; index >= 0; index -= 1) {
    if (history[index]?.id === summary.coversUntil) {
      covered = index;
      break;
    }
  }
  const acknowledgement: SessionMessage = {
    id: `${summary.id}-ack`,
    at: summary.at,
    role: 'assistant',
    text: 'Understood; I continue from this summary.',
    toolCalls: [],
    model: summary.model,
  };
  return [summary, acknowledgement, ...history.slice(covered + 1).filter((message) => message.role !== 'summary')];
}

import { randomUUID } from 'node:crypto';
import type { SessionMessage, StoredAttachment, ToolResult } from '@molf/protocol';
import type { TurnServices } from './turn-services.ts';

/**
 * Stores a tool call's result as the session's next message (durably, before anything else sees it),
 * adds it to the turn's history and publishes `tool-call.ended`.
 */
export async function storeToolResult(
  services: Pick<TurnServices, 'store' | 'events'>,
  options: {
    sessionId: string;
    turnId: string;
    /** The turn's history: the message is appended to it once stored. */
    history: SessionMessage[];
    toolCallId: string;
    toolName: string;
    result: ToolResult;
    /** The result's attachments, already stored beside the history. Default none. */
    attachments?: readonly StoredAttachment[];
  },
): Promise<void> {
  const { sessionId, turnId, toolCallId, toolName, result } = options;
  const attachments = options.attachments ?? [];
  const failure = {
    ...(result.error === undefined ? {} : { error: result.error }),
    ...(result.meta?.errorKind === undefined ? {} : { errorKind: String(result.meta.errorKind) }),
  };
  const truncated = result.meta?.truncated === true;
  const message: SessionMessage = {
    id: randomUUID(),
    at: new Date().toISOString(),
    role: 'tool',
    toolCallId,
    toolName,
    output: result.output,
    ...(attachments.length === 0 ? {} : { attachments: [...attachments] }),
    ...failure,
    ...(truncated ? { truncated: true } : {}),
  };
  await services.store.append(sessionId, message);
  options.history.push(message);
  services.events.publish(sessionId, {
    type: 'tool-call.ended',
    turnId,
    toolCallId,
    toolName,
    output: result.output,
    ...failure,
    truncated,
  });
}

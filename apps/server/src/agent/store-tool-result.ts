import { randomUUID } from 'node:crypto';
import { type SessionMessage, type StoredAttachment, type ToolResult, toolOutputIdOf } from '@molf/protocol';
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
  // Only a spill file of the worker's own kind is recorded: the server will ask for no other path.
  const outputPath = result.meta?.outputPath;
  const outputBytes = result.meta?.outputBytes;
  const fullOutput =
    truncated && outputPath !== undefined && toolOutputIdOf(outputPath) !== undefined
      ? { path: outputPath, ...(outputBytes === undefined ? {} : { bytes: outputBytes }) }
      : undefined;
  const kept = {
    ...(fullOutput === undefined ? {} : { fullOutput }),
    ...(attachments.length === 0 ? {} : { attachments: [...attachments] }),
    ...(result.diff === undefined ? {} : { diff: result.diff }),
  };
  const message: SessionMessage = {
    id: randomUUID(),
    at: new Date().toISOString(),
    role: 'tool',
    toolCallId,
    toolName,
    output: result.output,
    ...kept,
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
    ...kept,
  });
}

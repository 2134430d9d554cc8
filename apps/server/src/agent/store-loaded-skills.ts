import { randomUUID } from 'node:crypto';
import { type SessionMessage, type ToolCallId, toErrorResult, type WorkerId } from '@molf/protocol';
import { storeToolResult } from './store-tool-result.ts';
import type { TurnServices } from './turn-services.ts';

/**
 * The skills a person loaded with the prompt, stored as if the model had called `skill` for each (the
 * person asked for them: no approval), so every later step sees them and they are never pruned.
 */
export async function storeLoadedSkills(
  services: TurnServices,
  state: {
    sessionId: string;
    turnId: string;
    workerId: WorkerId;
    modelId: string;
    /** The turn's history: the messages are appended to it as they are stored. */
    history: SessionMessage[];
    signal: AbortSignal;
    names: readonly string[];
  },
): Promise<void> {
  const { names } = state;
  const { store, events } = services;
  const skill = services.catalog.serverTool('skill');
  if (skill === undefined) return;
  const calls = names.map((name) => ({ toolCallId: `tc_${randomUUID()}`, toolName: 'skill', args: { name } }));
  const message: SessionMessage = {
    id: randomUUID(),
    at: new Date().toISOString(),
    role: 'assistant',
    text: '',
    toolCalls: calls,
    model: state.modelId,
  };
  await store.append(state.sessionId, message);
  state.history.push(message);
  events.publish(state.sessionId, { type: 'message.completed', turnId: state.turnId, message });
  for (const call of calls) {
    events.publish(state.sessionId, { type: 'tool-call.started', turnId: state.turnId, ...call });
    const result = await skill
      .run(call.args, {
        sessionId: state.sessionId,
        workerId: state.workerId,
        toolCallId: call.toolCallId as ToolCallId,
        modelId: state.modelId,
        signal: state.signal,
        logger: services.logger,
      })
      .catch((error: unknown) =>
        toErrorResult('internal', `the skill could not be loaded: ${(error as Error).message}`),
      );
    await storeToolResult(services, {
      sessionId: state.sessionId,
      turnId: state.turnId,
      history: state.history,
      toolCallId: call.toolCallId,
      toolName: 'skill',
      result,
    });
  }
}

import { randomUUID } from 'node:crypto';
import type { CallUsage, SessionEvent, SessionMessage } from '@molf/protocol';
import type { TrackedEnvelope } from '@trpc/server';

/** An assistant message without tool calls: `answer` by default, a fresh id, with the usage given. */
export function assistantMessage(options: { text?: string; usage?: CallUsage; id?: string } = {}): SessionMessage {
  return {
    id: options.id ?? randomUUID(),
    at: new Date().toISOString(),
    role: 'assistant',
    text: options.text ?? 'answer',
    toolCalls: [],
    model: 'fake/m',
    ...(options.usage === undefined ? {} : { usage: options.usage }),
  };
}

/** The first `count` events of a session's stream, each with its id (fewer if the stream ends). */
export async function takeEvents(stream: AsyncGenerator<TrackedEnvelope<SessionEvent>>, count: number) {
  const taken: Array<{ id: string; data: SessionEvent }> = [];
  for (let index = 0; index < count; index += 1) {
    const next = await stream.next();
    if (next.done === true) break;
    const [id, data] = next.value;
    taken.push({ id, data });
  }
  return taken;
}

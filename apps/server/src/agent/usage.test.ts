import type { SessionEvent } from '@molf/protocol';
import { describe, expect, it } from 'vitest';
import { follow, newSession, type Stack, startStack } from '../testing/agent-stack.ts';

type TurnEnded = Extract<SessionEvent, { type: 'turn.ended' }>;

function turnsEnded(events: readonly SessionEvent[]): TurnEnded[] {
  return events.filter((event): event is TurnEnded => event.type === 'turn.ended');
}

async function answers(stack: Stack, sessionId: string) {
  const { messages } = await stack.client.rpc.sessions.get.query({ sessionId });
  return messages.flatMap((message) => (message.role === 'assistant' ? [message] : []));
}

const glob = { id: 'call_glob', name: 'glob', arguments: { pattern: '*' } };
const permissions = JSON.stringify({ '*': 'ask', glob: 'allow', task: 'allow' });

describe('usage and cost: tokens per call, per turn and per session', () => {
  it('prices each call, sums a turn’s steps in turn.ended and the session’s turns in its summary', async () => {
    await using stack = await startStack({
      permissions,
      prices: { 'fake/test-model': { input: 3, output: 15 } },
      turns: [
        { toolCalls: [glob], usage: { promptTokens: 1_000, completionTokens: 100 } },
        { text: 'found them', usage: { promptTokens: 2_000, completionTokens: 50 } },
        { text: 'again', usage: { promptTokens: 500, completionTokens: 10 } },
      ],
    });
    const session = await newSession(stack);
    expect(session.usage).toEqual({ inputTokens: 0, outputTokens: 0 });
    using watch = follow(stack.client, session.sessionId);
    await stack.client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'list files' });
    await watch.turnEnded(1);
    await stack.client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'once more' });
    await watch.turnEnded(2);

    // 1,000 × $3 + 100 × $15 per million; 2,000 × $3 + 50 × $15; 500 × $3 + 10 × $15.
    expect((await answers(stack, session.sessionId)).map((message) => message.usage)).toEqual([
      { inputTokens: 1_000, outputTokens: 100, costUsd: 0.0045, costSource: 'config' },
      { inputTokens: 2_000, outputTokens: 50, costUsd: 0.00675, costSource: 'config' },
      { inputTokens: 500, outputTokens: 10, costUsd: 0.00165, costSource: 'config' },
    ]);
    const [first, second] = turnsEnded(watch.events);
    expect(first).toMatchObject({
      reason: 'completed',
      usage: { inputTokens: 3_000, outputTokens: 150, costUsd: 0.01125 },
      sessionUsage: { inputTokens: 3_000, outputTokens: 150, costUsd: 0.01125 },
    });
    expect(second).toMatchObject({
      usage: { inputTokens: 500, outputTokens: 10, costUsd: 0.00165 },
      sessionUsage: { inputTokens: 3_500, outputTokens: 160, costUsd: 0.0129 },
    });
    const whole = { inputTokens: 3_500, outputTokens: 160, costUsd: 0.0129 };
    expect((await stack.client.rpc.sessions.get.query({ sessionId: session.sessionId })).session.usage).toEqual(whole);
    const listed = await stack.client.rpc.sessions.list.query({});
    expect(listed.sessions.find((entry) => entry.sessionId === session.sessionId)?.usage).toEqual(whole);
  });

  it('adds up the tokens of a model without a price, and counts its calls as unpriced instead of free', async () => {
    await using stack = await startStack({
      permissions,
      turns: [
        { toolCalls: [glob], usage: { promptTokens: 120, completionTokens: 30 } },
        { text: 'done', usage: { promptTokens: 200, completionTokens: 7 } },
      ],
    });
    const session = await newSession(stack);
    using watch = follow(stack.client, session.sessionId);
    await stack.client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'list files' });
    await watch.turnEnded();

    for (const message of await answers(stack, session.sessionId)) {
      expect(message.usage).not.toHaveProperty('costUsd');
    }
    const totals = { inputTokens: 320, outputTokens: 37, unpricedCalls: 2 };
    expect(turnsEnded(watch.events)[0]).toMatchObject({ usage: totals, sessionUsage: totals });
    expect(turnsEnded(watch.events)[0]?.usage).not.toHaveProperty('costUsd');
    expect((await stack.client.rpc.sessions.get.query({ sessionId: session.sessionId })).session.usage).toEqual(totals);
  });

  it('takes the cost the provider reports (OpenRouter’s usage.cost) over the configured price, and prices cache reads', async () => {
    await using stack = await startStack({
      prices: { 'fake/*': { input: 2, output: 8, cacheRead: 0.5 } },
      turns: [
        { text: 'reported', usage: { promptTokens: 1_000, completionTokens: 100, cost: 0.0123 } },
        { text: 'cached', usage: { promptTokens: 10_000, completionTokens: 100, cachedTokens: 8_000 } },
      ],
    });
    const session = await newSession(stack);
    using watch = follow(stack.client, session.sessionId);
    await stack.client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'one' });
    await watch.turnEnded(1);
    await stack.client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'two' });
    await watch.turnEnded(2);

    // 2,000 uncached × $2 + 8,000 cached × $0.5 + 100 × $8 per million = 4,000 + 4,000 + 800.
    expect((await answers(stack, session.sessionId)).map((message) => message.usage)).toEqual([
      { inputTokens: 1_000, outputTokens: 100, costUsd: 0.0123, costSource: 'provider' },
      { inputTokens: 10_000, outputTokens: 100, cacheReadTokens: 8_000, costUsd: 0.0088, costSource: 'config' },
    ]);
    expect((await stack.client.rpc.sessions.get.query({ sessionId: session.sessionId })).session.usage).toEqual({
      inputTokens: 11_000,
      outputTokens: 200,
      cacheReadTokens: 8_000,
      costUsd: 0.0211,
    });
  });

  it('counts a subagent’s calls in the turn that started it and in the parent session, and apart in its own session', async () => {
    await using stack = await startStack({
      permissions,
      prices: { 'fake/test-model': { input: 1, output: 1 } },
      turns: [
        {
          toolCalls: [
            {
              id: 'call_task',
              name: 'task',
              arguments: { agent: 'explore', description: 'look', prompt: 'CHILD: look' },
            },
          ],
          usage: { promptTokens: 100, completionTokens: 10 },
        },
        { match: 'CHILD', toolCalls: [glob], usage: { promptTokens: 1_000, completionTokens: 20 } },
        { match: 'CHILD', text: 'seen it', usage: { promptTokens: 1_100, completionTokens: 30 } },
        { text: 'the child saw it', usage: { promptTokens: 300, completionTokens: 40 } },
      ],
    });
    const session = await newSession(stack);
    using watch = follow(stack.client, session.sessionId);
    await stack.client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'delegate' });
    await watch.turnEnded();

    const child = { inputTokens: 2_100, outputTokens: 50, costUsd: 0.00215 };
    const childEnded = watch.events.find(
      (event) => event.type === 'subagent.event' && event.event.type === 'turn.ended',
    );
    expect(childEnded).toMatchObject({ event: { usage: child, sessionUsage: child } });
    const whole = { inputTokens: 2_500, outputTokens: 100, costUsd: 0.0026 };
    expect(turnsEnded(watch.events)[0]).toMatchObject({ usage: whole, sessionUsage: whole });
    expect((await stack.client.rpc.sessions.get.query({ sessionId: session.sessionId })).session.usage).toEqual(whole);
    const { sessions } = await stack.client.rpc.sessions.list.query({ parentSessionId: session.sessionId });
    expect(sessions.map((entry) => entry.usage)).toEqual([child]);
  });
});

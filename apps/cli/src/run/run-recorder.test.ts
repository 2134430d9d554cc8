import type { SessionEvent } from '@molf/protocol';
import { describe, expect, it } from 'vitest';
import { createRunRecorder } from './run-recorder.ts';

const stamp = { seq: 1, sessionId: 's1', at: '2025-01-01T00:00:00.000Z' };
const event = (body: Record<string, unknown>) => ({ ...stamp, ...body }) as SessionEvent;
const started = (toolCallId: string, toolName = 'shell_exec') =>
  event({ type: 'tool-call.started', turnId: 't', toolCallId, toolName, args: { command: toolCallId } });
const ended = (toolCallId: string, result: { error?: string; errorKind?: string }) =>
  event({
    type: 'tool-call.ended',
    turnId: 't',
    toolCallId,
    toolName: 'shell_exec',
    output: '',
    truncated: false,
    ...result,
  });

describe('the result of a run', () => {
  it('names each tool call by how it ended: ok, error, denied by the gate, cancelled, or never ended', () => {
    const recorder = createRunRecorder();
    for (const id of ['ok', 'failed', 'denied', 'cancelled', 'unended']) recorder.observe(started(id));
    recorder.observe(ended('ok', {}));
    recorder.observe(ended('failed', { error: 'exit code 1', errorKind: 'timeout' }));
    recorder.observe(ended('denied', { error: 'Permission denied', errorKind: 'permission_denied' }));
    recorder.observe(ended('cancelled', { error: 'cancelled', errorKind: 'cancelled' }));
    const result = recorder.toResult({ sessionId: 's1', exitReason: 'aborted' });
    expect(result.toolCalls.map((call) => [call.args.command, call.outcome, call.error])).toEqual([
      ['ok', 'ok', undefined],
      ['failed', 'error', 'exit code 1'],
      ['denied', 'denied', 'Permission denied'],
      ['cancelled', 'cancelled', 'cancelled'],
      ['unended', 'cancelled', undefined],
    ]);
    expect(result).toMatchObject({ exitReason: 'aborted', exitCode: 130 });
  });

  it("answers with the turn's last assistant message and counts the answers' usage, or the turn's total when it gives one", () => {
    const recorder = createRunRecorder();
    const answer = (text: string, inputTokens: number) =>
      event({
        type: 'message.completed',
        turnId: 't',
        message: {
          id: text,
          at: stamp.at,
          role: 'assistant',
          text,
          toolCalls: [],
          model: 'f/m',
          usage: { inputTokens, outputTokens: 1 },
        },
      });
    recorder.observe(answer('Let me look.', 10));
    recorder.observe(answer('Done.', 20));
    expect(recorder.toResult({ sessionId: 's1', exitReason: 'completed' })).toMatchObject({
      answer: 'Done.',
      usage: { inputTokens: 30, outputTokens: 2 },
      exitCode: 0,
    });
    recorder.observe(
      event({
        type: 'turn.ended',
        turnId: 't',
        reason: 'completed',
        usage: { inputTokens: 99, outputTokens: 9, costUsd: 0.5 },
      }),
    );
    expect(recorder.toResult({ sessionId: null, exitReason: 'step_limit' })).toMatchObject({
      sessionId: null,
      usage: { inputTokens: 99, outputTokens: 9, costUsd: 0.5 },
      exitCode: 3,
    });
  });
});

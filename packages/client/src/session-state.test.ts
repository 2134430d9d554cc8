import type { Approval, SessionEvent } from '@molf/protocol';
import { describe, expect, it } from 'vitest';
import { applySessionEvent, createSessionState } from './session-state.ts';

const approval = (approvalId: string): Approval => ({
  approvalId,
  kind: 'tool_call',
  sessionId: 's1',
  workerId: '00000000-0000-4000-8000-000000000001' as Approval['workerId'],
  toolCallId: 'tc',
  tool: 'shell_exec',
  args: { command: 'make' },
  reason: 'no rule matches',
  subjects: [],
  alwaysPatterns: ['make *'],
  requestedAt: new Date(0).toISOString(),
});
const event = (body: Record<string, unknown>) => ({ ...body, seq: 1, sessionId: 's1', at: 't' }) as SessionEvent;

describe('the state of a followed session', () => {
  it('is busy between the status events of a turn', () => {
    const busy = applySessionEvent(createSessionState('s1'), event({ type: 'status', status: 'busy' }));
    expect(busy.busy).toBe(true);
    expect(applySessionEvent(busy, event({ type: 'status', status: 'idle' })).busy).toBe(false);
  });

  it('keeps the approvals waiting, oldest first, each once, until resolved', () => {
    let state = createSessionState('s1');
    state = applySessionEvent(state, event({ type: 'approval.requested', approval: approval('a1') }));
    state = applySessionEvent(state, event({ type: 'approval.requested', approval: approval('a2') }));
    state = applySessionEvent(state, event({ type: 'approval.requested', approval: approval('a1') }));
    expect(state.approvals.map((waiting) => waiting.approvalId)).toEqual(['a1', 'a2']);
    state = applySessionEvent(
      state,
      event({ type: 'approval.resolved', approvalId: 'a1', outcome: 'approved', by: 'client:c' }),
    );
    expect(state.approvals.map((waiting) => waiting.approvalId)).toEqual(['a2']);
  });

  it('leaves the state it was given unchanged', () => {
    const before = createSessionState('s1');
    applySessionEvent(before, event({ type: 'approval.requested', approval: approval('a1') }));
    expect(before.approvals).toEqual([]);
  });
});

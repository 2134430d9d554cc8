import type { Approval, SessionEvent } from '@molf/protocol';
import { describe, expect, it } from 'vitest';
import { applySessionEvent, createSessionState, isApprovalOfSession } from './session-state.ts';

const approval = (approvalId: string, overrides: Partial<Approval> = {}): Approval => ({
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
  ...overrides,
});
const event = (body: Record<string, unknown>) => ({ ...body, seq: 1, sessionId: 's1', at: 't' }) as SessionEvent;

/** A child session's own event as the parent's stream carries it. */
const fromChild = (body: Record<string, unknown>) =>
  event({
    type: 'subagent.event',
    toolCallId: 'call_task',
    agent: 'explore',
    childSessionId: 'child1',
    event: { ...body, seq: 7, sessionId: 'child1', at: 't' },
  });
const childApproval = (approvalId: string) =>
  approval(approvalId, { sessionId: 'child1', subagent: { agent: 'explore', parentSessionId: 's1' } });

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

  it("queues a subagent's approval, wrapped in subagent.event, among the session's own, in order", () => {
    let state = createSessionState('s1');
    state = applySessionEvent(state, event({ type: 'approval.requested', approval: approval('a1') }));
    state = applySessionEvent(state, fromChild({ type: 'approval.requested', approval: childApproval('c1') }));
    const queued = [
      ['a1', 's1'],
      ['c1', 'child1'],
    ];
    expect(state.approvals.map((waiting) => [waiting.approvalId, waiting.sessionId])).toEqual(queued);
    // The backfill brings it again, unwrapped: still once.
    state = applySessionEvent(state, event({ type: 'approval.requested', approval: childApproval('c1') }));
    expect(state.approvals.map((waiting) => [waiting.approvalId, waiting.sessionId])).toEqual(queued);
  });

  it("drops a subagent's approval when its wrapped resolution arrives (answered elsewhere or cancelled)", () => {
    let state = createSessionState('s1');
    state = applySessionEvent(state, fromChild({ type: 'approval.requested', approval: childApproval('c1') }));
    state = applySessionEvent(state, fromChild({ type: 'approval.requested', approval: childApproval('c2') }));
    state = applySessionEvent(
      state,
      fromChild({ type: 'approval.resolved', approvalId: 'c1', outcome: 'cancelled', by: 'server' }),
    );
    expect(state.approvals.map((waiting) => waiting.approvalId)).toEqual(['c2']);
  });

  it("does not take a subagent's status for the session's own", () => {
    const busy = applySessionEvent(createSessionState('s1'), event({ type: 'status', status: 'busy' }));
    expect(applySessionEvent(busy, fromChild({ type: 'status', status: 'idle' })).busy).toBe(true);
    const idle = createSessionState('s1');
    expect(applySessionEvent(idle, fromChild({ type: 'status', status: 'busy' }))).toBe(idle);
  });

  it("counts a subagent's approval as the session's, and no other session's", () => {
    expect(isApprovalOfSession(approval('a1'), 's1')).toBe(true);
    expect(isApprovalOfSession(childApproval('c1'), 's1')).toBe(true);
    expect(isApprovalOfSession(childApproval('c1'), 'child1')).toBe(true);
    expect(isApprovalOfSession(childApproval('c1'), 's2')).toBe(false);
    expect(isApprovalOfSession(approval('m1', { kind: 'mcp_server', sessionId: 'worker:w' }), 's1')).toBe(false);
  });

  it('leaves the state it was given unchanged', () => {
    const before = createSessionState('s1');
    applySessionEvent(before, event({ type: 'approval.requested', approval: approval('a1') }));
    expect(before.approvals).toEqual([]);
  });
});

describe("busy from a turn's own events", () => {
  it('takes a turn that streams for a running one, though its busy status came before the follower', () => {
    const at = new Date().toISOString();
    const delta = { type: 'message.delta', turnId: 't', text: 'x', seq: 3, sessionId: 's', at } as const;
    expect(applySessionEvent(createSessionState('s'), delta).busy).toBe(true);
    const started = {
      type: 'turn.started',
      turnId: 't',
      messageId: 'm',
      model: 'a/b',
      seq: 2,
      sessionId: 's',
      at,
    } as const;
    expect(applySessionEvent(createSessionState('s'), started).busy).toBe(true);
    const idle = { type: 'status', status: 'idle', seq: 9, sessionId: 's', at } as const;
    expect(applySessionEvent(applySessionEvent(createSessionState('s'), delta), idle).busy).toBe(false);
  });
});

import type { Approval, WorkerId } from '@molf/protocol';
import { describe, expect, it } from 'vitest';
import type { GateOutcome, GateRequest } from './approval-gate.ts';
import { createPendingApprovals, type PendingEntry, type Resolution } from './pending-approvals.ts';
import { NO_CALL_PATHS } from './resolve-call-paths.ts';

const WORKER = '00000000-0000-4000-8000-000000000001' as WorkerId;
const OTHER_WORKER = '00000000-0000-4000-8000-000000000002' as WorkerId;

function entry(
  approvalId: string,
  options: { sessionId?: string; workerId?: WorkerId; shareKey?: string; signal?: AbortSignal } = {},
): PendingEntry {
  const sessionId = options.sessionId ?? 's1';
  const workerId = options.workerId ?? WORKER;
  const request: GateRequest = {
    sessionId,
    workerId,
    toolCallId: `tc-${approvalId}`,
    tool: 'shell_exec',
    args: { command: 'make' },
    ...(options.shareKey === undefined ? {} : { shareKey: options.shareKey }),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  };
  const approval: Approval = {
    approvalId,
    kind: 'tool_call',
    sessionId,
    workerId,
    toolCallId: request.toolCallId,
    tool: 'shell_exec',
    args: request.args,
    reason: 'no rule matches',
    subjects: [],
    alwaysPatterns: ['make *'],
    requestedAt: new Date(0).toISOString(),
  };
  return { approval, request, callPaths: NO_CALL_PATHS, home: undefined };
}

const allow: GateOutcome = { type: 'allow' };
const approved = (by: string): Resolution => ({ outcome: 'approved', by, gate: allow });
const offline: Resolution = {
  outcome: 'denied',
  by: 'server',
  reason: 'worker went offline',
  gate: { type: 'deny', message: 'offline', errorKind: 'worker_offline' },
};

function setUp() {
  const settled: Array<{ approvalId: string; resolution: Resolution }> = [];
  const pending = createPendingApprovals({
    onSettled: (settledEntry, resolution) => settled.push({ approvalId: settledEntry.approval.approvalId, resolution }),
  });
  return { pending, settled };
}

describe('pending approvals', () => {
  it('lists waiting approvals by session and worker, and forgets them once settled', async () => {
    const { pending, settled } = setUp();
    const first = pending.open(entry('a1', { sessionId: 's1' }));
    void pending.open(entry('a2', { sessionId: 's2', workerId: OTHER_WORKER }));
    expect(pending.list().map((waiting) => waiting.approval.approvalId)).toEqual(['a1', 'a2']);
    expect(pending.list({ sessionId: 's2' }).map((waiting) => waiting.approval.approvalId)).toEqual(['a2']);
    expect(pending.list({ workerId: WORKER }).map((waiting) => waiting.approval.approvalId)).toEqual(['a1']);
    pending.settle('a1', approved('client:c1'));
    expect(await first).toEqual(allow);
    expect(pending.list().map((waiting) => waiting.approval.approvalId)).toEqual(['a2']);
    expect(settled).toEqual([{ approvalId: 'a1', resolution: approved('client:c1') }]);
  });

  it('lets the first answer win: a second claim gets nothing while the first is applied', () => {
    const { pending } = setUp();
    void pending.open(entry('a1'));
    expect(pending.claim('s1', 'a1')?.approval.approvalId).toBe('a1');
    expect(pending.claim('s1', 'a1')).toBeUndefined();
    expect(pending.isClaimed('a1')).toBe(true);
  });

  it('refuses an answer given for another session', () => {
    const { pending } = setUp();
    void pending.open(entry('a1', { sessionId: 's1' }));
    expect(pending.claim('s2', 'a1')).toBeUndefined();
    expect(pending.isClaimed('a1')).toBe(false);
  });

  it('keeps an interruption during an answer and applies it only when the answer fails', async () => {
    const { pending, settled } = setUp();
    const outcome = pending.open(entry('a1'));
    pending.claim('s1', 'a1');
    pending.interrupt('a1', offline);
    expect(settled).toEqual([]);
    pending.release('a1');
    expect(await outcome).toEqual(offline.gate);
    expect(settled.map((item) => item.resolution.outcome)).toEqual(['denied']);
  });

  it('lets an answer being applied stand over an interruption that came meanwhile', async () => {
    const { pending, settled } = setUp();
    const outcome = pending.open(entry('a1'));
    pending.claim('s1', 'a1');
    pending.interrupt('a1', offline);
    pending.settle('a1', approved('client:c1'));
    expect(await outcome).toEqual(allow);
    expect(settled).toHaveLength(1);
  });

  it('lets a released approval be answered again', () => {
    const { pending } = setUp();
    void pending.open(entry('a1'));
    pending.claim('s1', 'a1');
    pending.release('a1');
    expect(pending.claim('s1', 'a1')?.approval.approvalId).toBe('a1');
  });

  it('answers requests that joined under one share key together, and only that worker’s', async () => {
    const { pending, settled } = setUp();
    const first = pending.open(entry('a1', { shareKey: 'mcp:github' }));
    expect(pending.join(OTHER_WORKER, 'mcp:github')).toBeUndefined();
    expect(pending.join(WORKER, 'mcp:other')).toBeUndefined();
    const joined = pending.join(WORKER, 'mcp:github');
    pending.settle('a1', approved('client:c1'));
    expect(await first).toEqual(allow);
    expect(await joined).toEqual(allow);
    expect(settled).toHaveLength(1);
  });

  it('cancels an approval when its request is aborted', async () => {
    const { pending, settled } = setUp();
    const controller = new AbortController();
    const outcome = pending.open(entry('a1', { signal: controller.signal }));
    controller.abort();
    expect(await outcome).toMatchObject({ type: 'deny', errorKind: 'cancelled' });
    expect(settled[0]?.resolution).toMatchObject({ outcome: 'cancelled', reason: 'the turn was aborted' });
    expect(pending.list()).toEqual([]);
  });

  it('settles each approval once: a later settle or interrupt does nothing', async () => {
    const { pending, settled } = setUp();
    const outcome = pending.open(entry('a1'));
    pending.settle('a1', approved('client:c1'));
    pending.settle('a1', approved('client:c2'));
    pending.interrupt('a1', offline);
    expect(await outcome).toEqual(allow);
    expect(settled).toHaveLength(1);
  });
});

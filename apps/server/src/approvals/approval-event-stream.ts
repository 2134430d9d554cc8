import type { Approval, ApprovalEvent } from '@molf/protocol';
import type { ApprovalGate } from './approval-gate.ts';

/**
 * Where the events come from: the gate's problems, and the approvals of this server or, with
 * several on one database, of all of them (see `ApprovalAnswers`).
 */
export type ApprovalFeed = {
  problems: ApprovalGate['problems'];
  pending(filter: ApprovalEventFilter): Promise<Approval[]>;
  subscribe(listener: (event: ApprovalEvent) => void): () => void;
};

/** Events a subscriber asked for: one session's, one worker's, or all. */
export type ApprovalEventFilter = { sessionId?: string | undefined; workerId?: string | undefined };

function wanted(event: ApprovalEvent, filter: ApprovalEventFilter, workerOfApproval: Map<string, string>): boolean {
  switch (event.type) {
    case 'approval.requested':
      return (
        (filter.sessionId === undefined || event.approval.sessionId === filter.sessionId) &&
        (filter.workerId === undefined || event.approval.workerId === filter.workerId)
      );
    case 'approval.resolved':
      return (
        (filter.sessionId === undefined || event.sessionId === filter.sessionId) &&
        (filter.workerId === undefined || workerOfApproval.get(event.approvalId) === filter.workerId)
      );
    case 'permissions.invalid':
      return filter.workerId === undefined || event.problem.workerId === filter.workerId;
    case 'permissions.valid':
      return filter.workerId === undefined || event.workerId === filter.workerId;
  }
}

/**
 * Pending approvals and current file problems first, then live events, with no gap and no
 * duplicate: the listener is attached before the snapshot is taken, and a request already replayed
 * is not sent again.
 */
export async function* streamApprovalEvents(
  feed: ApprovalFeed,
  filter: ApprovalEventFilter,
  signal: AbortSignal | undefined,
): AsyncGenerator<ApprovalEvent> {
  const queue: ApprovalEvent[] = [];
  let wake: (() => void) | undefined;
  const workerOfApproval = new Map<string, string>();
  const unsubscribe = feed.subscribe((event) => {
    queue.push(event);
    wake?.();
  });
  const onAbort = () => wake?.();
  signal?.addEventListener('abort', onAbort);
  try {
    const replayed = new Set<string>();
    for (const problem of feed.problems()) {
      const event: ApprovalEvent = { type: 'permissions.invalid', problem };
      if (wanted(event, filter, workerOfApproval)) yield event;
    }
    for (const approval of await feed.pending(filter)) {
      replayed.add(approval.approvalId);
      workerOfApproval.set(approval.approvalId, approval.workerId);
      yield { type: 'approval.requested', approval };
    }
    while (signal?.aborted !== true) {
      const event = queue.shift();
      if (event === undefined) {
        await new Promise<void>((resolvePromise) => {
          wake = resolvePromise;
        });
        wake = undefined;
        continue;
      }
      if (event.type === 'approval.requested' && replayed.has(event.approval.approvalId)) continue;
      const isWanted = wanted(event, filter, workerOfApproval);
      // Only approvals this subscriber sees are remembered, and each only until it is resolved.
      if (event.type === 'approval.requested' && isWanted) {
        workerOfApproval.set(event.approval.approvalId, event.approval.workerId);
      }
      if (event.type === 'approval.resolved') {
        replayed.delete(event.approvalId);
        workerOfApproval.delete(event.approvalId);
      }
      if (isWanted) yield event;
    }
  } finally {
    signal?.removeEventListener('abort', onAbort);
    unsubscribe();
  }
}

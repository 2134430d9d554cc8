import type { Approval, ApprovalScope, WorkerId } from '@molf/protocol';
import type { GateOutcome, GateRequest } from './approval-gate.ts';
import { CANCELLED_MESSAGE, type CallPaths } from './resolve-call-paths.ts';

/** How a pending approval ended, and the gate's outcome for the call that waited. */
export type Resolution = {
  outcome: 'approved' | 'denied' | 'cancelled';
  by: string;
  scope?: ApprovalScope;
  connectionId?: string;
  /** The client program that answered. */
  client?: string;
  /** What a "session" or "always" answer added as allow rules, for the audit log. */
  added?: { rules: string[]; coversCall: boolean; offeredPatterns?: string[] };
  reason?: string;
  gate: GateOutcome;
};

/** A call waiting for a person, with what it was judged on (to judge it again when rules change). */
export type PendingEntry = {
  approval: Approval;
  request: GateRequest;
  callPaths: CallPaths;
  home: string | undefined;
};

export type PendingApprovals = {
  /**
   * Adds an approval and waits for its answer. Aborting the request's signal cancels it (or, while
   * an answer is being applied, after that answer fails).
   */
  open(entry: PendingEntry): Promise<GateOutcome>;
  /** Waits for the answer of the approval waiting for this worker under `shareKey`; undefined when none waits. */
  join(workerId: WorkerId, shareKey: string): Promise<GateOutcome> | undefined;
  /**
   * Takes an approval for answering. The first answer wins: undefined when none waits under this id,
   * it belongs to another session, or another answer is being applied.
   */
  claim(sessionId: string, approvalId: string): PendingEntry | undefined;
  /** The answer being applied failed: the approval waits again, unless an interruption came meanwhile. */
  release(approvalId: string): void;
  /** Ends an approval with this resolution (also a claimed one: the answer being applied). */
  settle(approvalId: string, resolution: Resolution, subjects?: readonly string[]): void;
  /** An abort, a worker going offline, shutdown: applied now, or kept until a claim is released. */
  interrupt(approvalId: string, resolution: Resolution): void;
  /** Waiting approvals, in the order they were asked, claimed ones included. */
  list(filter?: { sessionId?: string | undefined; workerId?: string | undefined }): PendingEntry[];
  isClaimed(approvalId: string): boolean;
};

type Slot = {
  entry: PendingEntry;
  /**
   * Set while an approve is being applied (an "always" rule is saved): the answer has been taken, so
   * other answers are refused, and an interruption meanwhile waits in `interrupted`.
   */
  claimed: boolean;
  interrupted: Resolution | undefined;
  /** Who waits for the outcome: the request, and later requests that joined it. */
  waiters: Array<(outcome: GateOutcome) => void>;
  detach: () => void;
};

/**
 * The approvals waiting for a person, as server state: first answer wins, interruptions during an
 * answer are deferred, requests with one share key wait together. Every ending goes through
 * `onSettled` (audit, events) exactly once. Kept apart from the gate's judging so it can move to a
 * database.
 */
export function createPendingApprovals(options: {
  onSettled(entry: PendingEntry, resolution: Resolution, subjects: readonly string[] | undefined): void;
}): PendingApprovals {
  const slots = new Map<string, Slot>();

  function settle(approvalId: string, resolution: Resolution, subjects?: readonly string[]): void {
    const slot = slots.get(approvalId);
    if (slot === undefined) return;
    slots.delete(approvalId);
    slot.detach();
    options.onSettled(slot.entry, resolution, subjects);
    for (const waiter of slot.waiters) waiter(resolution.gate);
  }

  function interrupt(approvalId: string, resolution: Resolution): void {
    const slot = slots.get(approvalId);
    if (slot === undefined) return;
    if (slot.claimed) slot.interrupted ??= resolution;
    else settle(approvalId, resolution);
  }

  return {
    open(entry) {
      const { approvalId } = entry.approval;
      const { signal } = entry.request;
      return new Promise<GateOutcome>((resolve) => {
        const onAbort = () =>
          interrupt(approvalId, {
            outcome: 'cancelled',
            by: 'server',
            reason: 'the turn was aborted',
            gate: { type: 'deny', message: CANCELLED_MESSAGE, errorKind: 'cancelled' },
          });
        slots.set(approvalId, {
          entry,
          claimed: false,
          interrupted: undefined,
          waiters: [resolve],
          detach: () => signal?.removeEventListener('abort', onAbort),
        });
        signal?.addEventListener('abort', onAbort, { once: true });
        if (signal?.aborted === true) onAbort();
      });
    },

    join(workerId, shareKey) {
      const slot = [...slots.values()].find(
        (candidate) => candidate.entry.approval.workerId === workerId && candidate.entry.request.shareKey === shareKey,
      );
      if (slot === undefined) return undefined;
      return new Promise<GateOutcome>((resolve) => slot.waiters.push(resolve));
    },

    claim(sessionId, approvalId) {
      const slot = slots.get(approvalId);
      // The session must match: an answer for one session's prompt can't be replayed into another.
      if (slot === undefined || slot.entry.approval.sessionId !== sessionId || slot.claimed) return undefined;
      slot.claimed = true;
      return slot.entry;
    },

    release(approvalId) {
      const slot = slots.get(approvalId);
      if (slot === undefined) return;
      slot.claimed = false;
      if (slot.interrupted !== undefined) settle(approvalId, slot.interrupted);
    },

    settle,
    interrupt,

    list(filter = {}) {
      return [...slots.values()]
        .map((slot) => slot.entry)
        .filter(
          (entry) =>
            (filter.sessionId === undefined || entry.approval.sessionId === filter.sessionId) &&
            (filter.workerId === undefined || entry.approval.workerId === filter.workerId),
        );
    },

    isClaimed: (approvalId) => slots.get(approvalId)?.claimed === true,
  };
}

import type { Approval, SessionEvent } from '@molf/protocol';

/** What a client following a session knows of it beyond the events themselves. */
export type SessionState = {
  sessionId: string;
  /** A turn is running (a prompt sent now is queued). */
  busy: boolean;
  /**
   * Approvals waiting for an answer, oldest first: the session's, its subagents' (answered with
   * their own `sessionId`, the child's), and its worker's own (MCP server starts).
   */
  approvals: Approval[];
};

export function createSessionState(sessionId: string): SessionState {
  return { sessionId, busy: false, approvals: [] };
}

/** Whether an approval is a call of this session or of one of its subagents (whose `sessionId` is the child's). */
export function isApprovalOfSession(approval: Approval, sessionId: string): boolean {
  return approval.sessionId === sessionId || approval.subagent?.parentSessionId === sessionId;
}

/**
 * The state after one event (pure; the state given is not changed). An approval already known is
 * not added twice (the backfill and the live stream may both bring it); a resolved one is dropped.
 * A subagent's approvals count like the session's own: they reach the parent's followers only
 * wrapped in `subagent.event`. Nothing else of a child changes the parent's state (a child's
 * `status` is not the parent's).
 */
export function applySessionEvent(state: SessionState, event: SessionEvent): SessionState {
  switch (event.type) {
    case 'status':
      return { ...state, busy: event.status === 'busy' };
    // A turn's own events mean a turn runs, also to a follower that started too late for its status.
    case 'turn.started':
    case 'message.delta':
    case 'tool-call.started':
      return state.busy ? state : { ...state, busy: true };
    case 'approval.requested':
      return state.approvals.some((approval) => approval.approvalId === event.approval.approvalId)
        ? state
        : { ...state, approvals: [...state.approvals, event.approval] };
    case 'approval.resolved':
      return state.approvals.some((approval) => approval.approvalId === event.approvalId)
        ? { ...state, approvals: state.approvals.filter((approval) => approval.approvalId !== event.approvalId) }
        : state;
    case 'subagent.event':
      return event.event.type === 'approval.requested' || event.event.type === 'approval.resolved'
        ? applySessionEvent(state, event.event)
        : state;
    default:
      return state;
  }
}

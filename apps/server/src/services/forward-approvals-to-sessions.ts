import type { ApprovalGate } from '../approvals/index.ts';
import type { SessionEvents, SessionStore } from '../sessions/index.ts';

/**
 * Approvals of a session are part of its event stream too: a client following a session sees
 * what waits for an answer without subscribing to the gate. Approvals of no stored session (a
 * worker's MCP server start) stay on the gate's own stream. Returns the function that stops it.
 */
export function forwardApprovalsToSessions(options: {
  gate: ApprovalGate;
  sessions: SessionStore;
  events: SessionEvents;
}): () => void {
  const { gate, sessions, events } = options;
  return gate.subscribe((event) => {
    if (event.type === 'approval.requested' && sessions.get(event.approval.sessionId) !== undefined) {
      events.publish(event.approval.sessionId, { type: 'approval.requested', approval: event.approval });
    } else if (event.type === 'approval.resolved' && sessions.get(event.sessionId) !== undefined) {
      const { type: _type, sessionId, ...rest } = event;
      events.publish(sessionId, { type: 'approval.resolved', ...rest });
    }
  });
}

import type { Logger } from '@molf/logging';
import type { ApprovalGate } from '../approvals/index.ts';
import type { SessionEvents, SessionStore } from '../sessions/index.ts';

/**
 * Approvals of a session are part of its event stream too: a client following a session sees what
 * waits for an answer without subscribing to the gate. Approvals of no stored session (a worker's
 * MCP server start, a call run outside any session) stay on the gate's own stream. Each approval's
 * resolution follows its request, whatever the store takes to answer. Returns the function that stops it.
 */
export function forwardApprovalsToSessions(options: {
  gate: ApprovalGate;
  sessions: SessionStore;
  events: SessionEvents;
  logger: Logger;
}): () => void {
  const { sessions, events, logger } = options;
  /** Per approval: whether its request was published to a session, once known. */
  const published = new Map<string, Promise<boolean>>();
  return options.gate.subscribe((event) => {
    if (event.type === 'approval.requested') {
      const { approval } = event;
      published.set(
        approval.approvalId,
        sessions.get(approval.sessionId).then(
          (session) => {
            if (session === undefined) return false;
            events.publish(approval.sessionId, { type: 'approval.requested', approval });
            return true;
          },
          (error: unknown) => {
            logger.warn({ err: error, sessionId: approval.sessionId }, 'approval not shown in its session');
            return false;
          },
        ),
      );
    } else if (event.type === 'approval.resolved') {
      const { type: _type, sessionId, ...rest } = event;
      const wasPublished = published.get(event.approvalId);
      published.delete(event.approvalId);
      void wasPublished?.then((yes) => {
        if (yes) events.publish(sessionId, { type: 'approval.resolved', ...rest });
      });
    }
  });
}

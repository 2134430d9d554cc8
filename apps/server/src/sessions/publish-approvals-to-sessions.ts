import type { Logger } from '@molf/logging';
import type { ApprovalGate } from '../approvals/approval-gate.ts';
import type { SessionEvents } from './session-events.ts';
import type { SessionStore } from './session-store.ts';

/**
 * Approvals of a session are part of its event stream too. Approvals that belong to no stored
 * session (an MCP server's start, a call run outside any session) stay on the approval stream only.
 * Each approval's resolution follows its request, whatever the store takes to answer.
 */
export function publishApprovalsToSessions(options: {
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

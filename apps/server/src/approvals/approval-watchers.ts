import type { ApprovalEventFilter } from './approval-event-stream.ts';

/**
 * The people's clients that follow approvals now and may answer them (`approvals.events`
 * subscriptions of an operator or admin; a viewer's is not added), with what each follows: whether
 * somebody would see an approval of a session and could answer it is what an unattended run (a
 * cron job's, `onAsk: deny`) asks before it puts a question to nobody.
 */
export type ApprovalWatchers = {
  /** Counts a subscription until the returned function is called. */
  add(filter: ApprovalEventFilter): () => void;
  /** Whether a subscription would receive an approval of this session and worker. */
  watching(target: { sessionId: string; workerId: string }): boolean;
};

export function createApprovalWatchers(): ApprovalWatchers {
  const filters = new Set<ApprovalEventFilter>();
  return {
    add(filter) {
      // Each subscription its own entry, even when two have equal filters.
      const entry = { ...filter };
      filters.add(entry);
      return () => filters.delete(entry);
    },
    watching({ sessionId, workerId }) {
      for (const filter of filters) {
        if (
          (filter.sessionId === undefined || filter.sessionId === sessionId) &&
          (filter.workerId === undefined || filter.workerId === workerId)
        ) {
          return true;
        }
      }
      return false;
    },
  };
}

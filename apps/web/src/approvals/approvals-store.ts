import type { Approval, ApprovalScope, PermissionsProblem } from '@molf/protocol';
import { type Accessor, createEffect, createSignal, on, onCleanup } from 'solid-js';
import type { ServerLink } from '../link/server-link.ts';

/** How long "answered in another client" stays on screen. */
const GONE_NOTICE_MS = 6_000;

export type ApprovalChoice =
  | { type: 'approve'; scope: ApprovalScope; patterns?: string[]; expiresAt?: string }
  | { type: 'deny'; feedback?: string };

export type ApprovalsStore = {
  /** Every approval waiting, across sessions and workers, oldest first. */
  pending: Accessor<Approval[]>;
  /** Permission files that do not parse, by worker. */
  problems: Accessor<PermissionsProblem[]>;
  /** Approvals answered elsewhere a moment ago: their id, with what to say. */
  gone: Accessor<Array<{ approvalId: string; sessionId: string; text: string }>>;
  answer(approval: Approval, choice: ApprovalChoice): Promise<{ applied: boolean }>;
};

/**
 * Every pending approval the server knows, kept live: the page shows the one of the session on
 * screen and a badge and list for the rest. An approval answered in another client (or by a
 * rule) disappears with a note; after a reconnect the list is read again, since approvals answered
 * meanwhile sent no event this page saw.
 */
export function createApprovalsStore(link: ServerLink): ApprovalsStore {
  const [pending, setPending] = createSignal<Approval[]>([]);
  const [problems, setProblems] = createSignal<PermissionsProblem[]>([]);
  const [gone, setGone] = createSignal<Array<{ approvalId: string; sessionId: string; text: string }>>([]);
  /** Answers sent from this page: their resolution is no news here. */
  const answeredHere = new Set<string>();

  const note = (approvalId: string, sessionId: string, text: string) => {
    setGone((list) => [...list.filter((item) => item.approvalId !== approvalId), { approvalId, sessionId, text }]);
    setTimeout(() => setGone((list) => list.filter((item) => item.approvalId !== approvalId)), GONE_NOTICE_MS);
  };

  const subscription = link.client.rpc.approvals.events.subscribe(
    {},
    {
      onData: (event) => {
        switch (event.type) {
          case 'approval.requested':
            setPending((list) =>
              list.some((approval) => approval.approvalId === event.approval.approvalId)
                ? list
                : [...list, event.approval],
            );
            break;
          case 'approval.resolved': {
            const known = pending().some((approval) => approval.approvalId === event.approvalId);
            setPending((list) => list.filter((approval) => approval.approvalId !== event.approvalId));
            if (known && !answeredHere.has(event.approvalId)) {
              note(event.approvalId, event.sessionId, describeResolution(event.by, event.outcome));
            }
            answeredHere.delete(event.approvalId);
            break;
          }
          case 'permissions.invalid':
            setProblems((list) => [
              ...list.filter((problem) => problem.workerId !== event.problem.workerId),
              event.problem,
            ]);
            break;
          case 'permissions.valid':
            setProblems((list) => list.filter((problem) => problem.workerId !== event.workerId));
            break;
        }
      },
    },
  );
  onCleanup(() => subscription.unsubscribe());

  // The stream starts again after a reconnect and replays what waits; what was answered meanwhile goes.
  createEffect(
    on(
      link.reconnects,
      () => {
        void link.client.rpc.approvals.list.query({}).then((list) => {
          const waiting = new Set(list.map((approval) => approval.approvalId));
          setPending((current) => [
            ...current.filter((approval) => waiting.has(approval.approvalId)),
            ...list.filter((approval) => !current.some((known) => known.approvalId === approval.approvalId)),
          ]);
        });
      },
      { defer: true },
    ),
  );

  return {
    pending,
    problems,
    gone,
    async answer(approval, choice) {
      answeredHere.add(approval.approvalId);
      try {
        const { sessionId, approvalId } = approval;
        const answer =
          choice.type === 'deny'
            ? await link.client.rpc.approvals.deny.mutate({
                sessionId,
                approvalId,
                ...(choice.feedback === undefined || choice.feedback.trim() === ''
                  ? {}
                  : { feedback: choice.feedback }),
              })
            : await link.client.rpc.approvals.approve.mutate({
                sessionId,
                approvalId,
                scope: choice.scope,
                ...(choice.patterns === undefined ? {} : { patterns: choice.patterns }),
                ...(choice.expiresAt === undefined ? {} : { expiresAt: choice.expiresAt }),
              });
        if (!answer.applied) {
          setPending((list) => list.filter((item) => item.approvalId !== approvalId));
          note(approvalId, sessionId, 'Already answered in another client.');
        }
        return answer;
      } catch (error) {
        answeredHere.delete(approval.approvalId);
        throw error;
      }
    },
  };
}

function describeResolution(by: string, outcome: string): string {
  if (by.startsWith('client:')) return `Answered in another client (${outcome}).`;
  if (by.startsWith('link:')) return `Answered by a notification link (${outcome}).`;
  if (by.startsWith('rule')) return `Settled by a rule (${outcome}).`;
  return outcome === 'cancelled' ? 'Cancelled: the call no longer waits.' : `Settled by the server (${outcome}).`;
}

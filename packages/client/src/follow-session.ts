import type { Approval, ApprovalEvent, SessionEvent } from '@molf/protocol';
import type { MolfClient } from './create-molf-client.ts';
import { applySessionEvent, createSessionState, isApprovalOfSession, type SessionState } from './session-state.ts';

export type SessionFollower = {
  /** The state now: busy, approvals waiting (the session's and its subagents'). */
  state(): SessionState;
  /** Stops following (the session goes on on the server). */
  stop(): void;
};

export type FollowSessionOptions = {
  sessionId: string;
  /**
   * Also follow this worker's own approvals, which belong to no session (the start of an MCP server
   * new in its .mcp.json). Default: none.
   */
  workerId?: string | undefined;
  /**
   * Start with the running turn's events so far (a client that loaded the stored messages shows the
   * turn in progress, its streamed text included), instead of only what comes from now on.
   */
  fromTurnStart?: boolean;
  /**
   * Each event as it arrives, with the state after it. Events the follower makes up from what it
   * loads (approvals already waiting, the busy state) have `seq` 0.
   */
  onEvent(event: SessionEvent, state: SessionState): void;
  /**
   * What was already there was loaded (at the start, and again after a `session.resync`): the state
   * may have lost approvals answered meanwhile. Default: nothing.
   */
  onBackfill?: (state: SessionState) => void;
  /** A stream or a load failed; following goes on where it can. Default: ignored. */
  onError?: (error: unknown) => void;
  /**
   * The worker's rules file stopped parsing (`permissions.invalid`) or parses again
   * (`permissions.valid`), while `workerId` is followed. Default: nothing.
   */
  onPermissionsChange?: (event: Extract<ApprovalEvent, { type: 'permissions.invalid' | 'permissions.valid' }>) => void;
  /**
   * The server ended the session's event stream: the session was deleted (here or in another
   * client). Not called when the client closes, nor when the link is lost (the stream is sent
   * again once it is back). Default: nothing.
   */
  onEnded?: () => void;
};

/**
 * Follows one session for a client that shows it (the CLI's chat, the web client): live events from
 * now on, plus what was already there when it started — whether a turn runs and the approvals that
 * wait, its subagents' included — loaded again after a `session.resync` (events were missed while the
 * link was down).
 */
export function followSession(client: MolfClient, options: FollowSessionOptions): SessionFollower {
  const { sessionId } = options;
  let state = createSessionState(sessionId);
  let stopped = false;
  /** Live status events seen: a backfill's status is older than any that came while it ran. */
  let statusEvents = 0;
  const deliver = (event: SessionEvent) => {
    if (stopped) return;
    if (event.type === 'status' && event.seq !== 0) statusEvents += 1;
    state = applySessionEvent(state, event);
    options.onEvent(event, state);
  };
  const made = (body: Record<string, unknown>, at = new Date().toISOString()) =>
    ({ ...body, seq: 0, sessionId, at }) as SessionEvent;
  const requested = (approval: Approval) =>
    deliver(made({ type: 'approval.requested', approval }, approval.requestedAt));
  const fail = (error: unknown) => {
    if (!stopped) options.onError?.(error);
  };

  /** What was there before the stream started (or while it was cut off). */
  async function backfill(): Promise<void> {
    const statusEventsBefore = statusEvents;
    const session = await client.rpc.sessions.info.query({ sessionId });
    // A subagent's approval names the child's session: the worker's list has them with the session's own.
    const pending = (await client.rpc.approvals.list.query({ workerId: session.workerId })).filter((approval) =>
      isApprovalOfSession(approval, sessionId),
    );
    // A status event that came meanwhile is newer than the one read (a turn that started while the
    // approvals were listed must not be reported idle: Ctrl-C would then leave instead of aborting).
    if (statusEvents === statusEventsBefore && session.status !== (state.busy ? 'busy' : 'idle')) {
      deliver(made({ type: 'status', status: session.status }));
    }
    if (stopped) return;
    // Approvals answered while the events were missed are gone; nobody knows how they were answered.
    const waiting = new Set(pending.map((approval) => approval.approvalId));
    state = {
      ...state,
      approvals: state.approvals.filter(
        (approval) => !isApprovalOfSession(approval, sessionId) || waiting.has(approval.approvalId),
      ),
    };
    for (const approval of pending) requested(approval);
    options.onBackfill?.(state);
  }

  const events = client.rpc.sessions.events.subscribe(
    options.fromTurnStart === true ? { sessionId, fromTurnStart: true } : { sessionId, fromNow: true },
    {
      onData: (envelope: { data: SessionEvent }) => {
        deliver(envelope.data);
        if (envelope.data.type === 'session.resync') backfill().catch(fail);
      },
      onError: fail,
      // `stopped` is the server ending the stream (the session was deleted). The stream also
      // completes, without it, when this client closes: that is no news about the session.
      onStopped: () => {
        if (!stopped) options.onEnded?.();
      },
    },
  );
  const workerApprovals =
    options.workerId === undefined
      ? undefined
      : client.rpc.approvals.events.subscribe(
          { workerId: options.workerId },
          {
            onData: (event: ApprovalEvent) => {
              if (event.type === 'approval.requested' && event.approval.kind === 'mcp_server') {
                requested(event.approval);
              } else if (event.type === 'permissions.invalid' || event.type === 'permissions.valid') {
                if (!stopped) options.onPermissionsChange?.(event);
              } else if (
                event.type === 'approval.resolved' &&
                state.approvals.some(
                  (approval) => approval.approvalId === event.approvalId && approval.kind === 'mcp_server',
                )
              ) {
                const { type: _type, sessionId: _worker, ...rest } = event;
                deliver(made({ type: 'approval.resolved', ...rest }));
              }
            },
            onError: fail,
          },
        );
  backfill().catch(fail);

  return {
    state: () => state,
    stop() {
      stopped = true;
      events.unsubscribe();
      workerApprovals?.unsubscribe();
    },
  };
}

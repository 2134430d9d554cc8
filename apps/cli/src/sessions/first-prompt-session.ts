import type { MolfClient } from '@molf/client/node';
import type { SessionEvent, WorkerId } from '@molf/protocol';

type TurnEndReason = Extract<SessionEvent, { type: 'turn.ended' }>['reason'];

/**
 * A session made for a first prompt, removed again when that prompt never reached the model, so
 * that a failed first prompt leaves no empty session behind (`molf run`, `molf chat`).
 *
 * The contract:
 * 1. `createFirstPromptSession` makes the session on `workerId`, without a name: the server titles
 *    it from its first prompt.
 * 2. The caller sends the prompt and passes every event of the session to `observe`. The model has
 *    been reached once the turn shows its work: streamed text, a tool call, a stored assistant
 *    message, a subagent's event. From then on the session is kept, whatever happens.
 * 3. The caller calls `settle` once: with `{ type: 'refused' }` when `sessions.prompt` threw (bad
 *    model id, full queue, connection lost…), or with `{ type: 'ended', reason }` at the end of the
 *    prompt's turn. The session is removed when the prompt was refused, or when its turn ended in
 *    `error` before the model was reached (no key for the provider, an unknown model, a provider
 *    that refused the request). An abort (the person's Ctrl-C) keeps it: that was a choice.
 * 4. `settle` resolves with whether the session was removed; `removedNote` is the sentence to add to
 *    the error then. A removal that fails is reported in `failure`, never thrown: the prompt's own
 *    error is what the person must see.
 */
export type FirstPromptSession = {
  readonly sessionId: string;
  /** Whether the prompt has reached the model (see the contract). */
  readonly reached: boolean;
  observe(event: SessionEvent): void;
  settle(outcome: { type: 'refused' } | { type: 'ended'; reason: TurnEndReason }): Promise<SettledSession>;
};

export type SettledSession =
  | { removed: false; failure?: string }
  | {
      removed: true;
      /** "the new session … was removed: the prompt never reached the model". */
      removedNote: string;
    };

/** Whether an event shows the model's answer: text, a tool call, an assistant message, a subagent at work. */
export function showsModelWork(event: SessionEvent): boolean {
  switch (event.type) {
    case 'message.delta':
    case 'tool-call.started':
    case 'subagent.event':
      return true;
    case 'message.completed':
      return event.message.role === 'assistant';
    default:
      return false;
  }
}

export async function createFirstPromptSession(
  client: MolfClient,
  options: { workerId: WorkerId; model?: string | undefined },
): Promise<FirstPromptSession> {
  const { sessionId } = await client.rpc.sessions.create.mutate({
    workerId: options.workerId,
    ...(options.model === undefined ? {} : { model: options.model }),
  });
  let reached = false;
  let settled: Promise<SettledSession> | undefined;

  async function remove(): Promise<SettledSession> {
    try {
      await client.rpc.sessions.delete.mutate({ sessionId });
      return {
        removed: true,
        removedNote: `the new session ${sessionId} was removed: the prompt never reached the model`,
      };
    } catch (error) {
      return {
        removed: false,
        failure: `the new session ${sessionId} could not be removed: ${(error as Error).message}`,
      };
    }
  }

  return {
    sessionId,
    get reached() {
      return reached;
    },
    observe(event) {
      if (showsModelWork(event)) reached = true;
    },
    settle(outcome) {
      settled ??= (async (): Promise<SettledSession> => {
        if (reached) return { removed: false };
        if (outcome.type === 'refused' || outcome.reason === 'error') return remove();
        return { removed: false };
      })();
      return settled;
    },
  };
}

import { type TranscriptItem, transcriptFromMessages } from '@molf/client';
import { createSignal, Show } from 'solid-js';
import { errorMessage } from '../link/rpc-error.ts';
import { useSession } from './session-context.ts';

/**
 * A finished `task` call of a session opened later: the events that showed its subagent's work are
 * gone, its session is not. Read on demand and shown nested, like the live work.
 */
export function SubagentHistory(props: { toolCallId: string; render: (items: () => TranscriptItem[]) => unknown }) {
  const session = useSession();
  const [items, setItems] = createSignal<TranscriptItem[]>();
  const [state, setState] = createSignal<string>();
  const load = async () => {
    if (session === undefined) return;
    setState('loading…');
    try {
      const { sessions } = await session.link.client.rpc.sessions.list.query({
        parentSessionId: session.sessionId,
        limit: 200,
      });
      const child = sessions.find((candidate) => candidate.parent?.toolCallId === props.toolCallId);
      if (child === undefined) {
        setState('Its session is no longer kept.');
        return;
      }
      const { messages } = await session.link.client.rpc.sessions.get.query({ sessionId: child.sessionId });
      setItems(transcriptFromMessages(messages).items);
      setState(undefined);
    } catch (error) {
      setState(errorMessage(error));
    }
  };
  return (
    <Show
      when={items()}
      fallback={
        <div>
          <button type="button" class="link-button" data-testid="subagent-history" onClick={() => void load()}>
            Show the subagent’s work
          </button>
          <Show when={state()}>{(text) => <span class="muted small"> {text()}</span>}</Show>
        </div>
      }
    >
      {(loaded) => (
        <div class="subagent" data-testid="subagent">
          {props.render(loaded) as never}
        </div>
      )}
    </Show>
  );
}

import type { ToolFullOutput } from '@molf/protocol';
import { createSignal, Show } from 'solid-js';
import { errorMessage } from '../link/rpc-error.ts';
import { formatSize, LongText } from './long-text.tsx';
import { useSession } from './session-context.ts';

/** Pages of 1 MiB: a 5 MB output takes five round trips. */
const PAGE_BYTES = 1024 * 1024;
/** More than this is not loaded into the page at all: the worker keeps it, the person can read it there. */
const MAX_LOADED_BYTES = 64 * 1024 * 1024;

/**
 * The whole output of a result the model saw cut: read page by page from the worker's spill file
 * when asked, and shown in the virtualised long-text view.
 */
export function FullOutput(props: { toolCallId: string; fullOutput: ToolFullOutput; terminal: boolean }) {
  const session = useSession();
  const [text, setText] = createSignal<string>();
  const [loading, setLoading] = createSignal<string>();
  const [failure, setFailure] = createSignal<string>();
  const load = async () => {
    if (session === undefined) return;
    setFailure(undefined);
    const parts: string[] = [];
    let offset = 0;
    try {
      for (;;) {
        const page = await session.link.client.rpc.sessions.toolOutput.query({
          sessionId: session.sessionId,
          toolCallId: props.toolCallId,
          offset,
          limit: PAGE_BYTES,
        });
        parts.push(page.text);
        offset = page.offset + page.bytes;
        setLoading(`loading… ${formatSize(offset)} of ${formatSize(page.totalBytes)}`);
        if (page.done || page.bytes === 0) break;
        if (offset >= MAX_LOADED_BYTES) {
          parts.push(`\n… (${formatSize(page.totalBytes - offset)} more in ${props.fullOutput.path} on the worker)`);
          break;
        }
      }
      setText(parts.join(''));
    } catch (error) {
      setFailure(errorMessage(error));
    } finally {
      setLoading(undefined);
    }
  };
  return (
    <div class="full-output" data-testid="full-output">
      <Show
        when={text()}
        fallback={
          <button type="button" class="link-button" disabled={loading() !== undefined} onClick={() => void load()}>
            {loading() ??
              `Full output${props.fullOutput.bytes === undefined ? '' : ` (${formatSize(props.fullOutput.bytes)})`}`}
          </button>
        }
      >
        {(whole) => <LongText text={whole()} class={props.terminal ? 'terminal' : ''} label="full output" />}
      </Show>
      <Show when={failure()}>{(message) => <div class="tool-error">{message()}</div>}</Show>
    </div>
  );
}

import { createSignal, For, Show } from 'solid-js';
import { errorMessage } from '../link/rpc-error.ts';
import { loadDraft, saveDraft } from './drafts.ts';

/**
 * Where a prompt is written: Enter sends (Shift+Enter for a new line), the draft survives a
 * reload, a prompt sent while a turn runs is queued, and Stop aborts the turn.
 */
export function Composer(props: {
  sessionId: string;
  busy: boolean;
  queued: number;
  disabled: boolean;
  models: string[];
  model: string;
  onModel: (model: string) => void;
  onSend: (text: string) => Promise<unknown>;
  onStop: () => Promise<unknown>;
}) {
  const [text, setText] = createSignal(loadDraft(props.sessionId));
  const [failure, setFailure] = createSignal<string>();
  const [sending, setSending] = createSignal(false);

  const update = (value: string) => {
    setText(value);
    saveDraft(props.sessionId, value);
  };
  const send = async () => {
    const prompt = text().trim();
    if (prompt === '' || sending() || props.disabled) return;
    setSending(true);
    setFailure(undefined);
    try {
      await props.onSend(prompt);
      update('');
    } catch (error) {
      setFailure(errorMessage(error));
    } finally {
      setSending(false);
    }
  };
  return (
    <form
      class="composer"
      onSubmit={(event) => {
        event.preventDefault();
        void send();
      }}
    >
      <Show when={failure()}>
        {(message) => (
          <div class="tool-error" role="alert">
            {message()}
          </div>
        )}
      </Show>
      <textarea
        data-testid="prompt"
        aria-label="prompt"
        placeholder={
          props.busy ? 'Queue a prompt for after this turn…' : 'Ask Molf…  (Enter to send, Shift+Enter for a new line)'
        }
        rows={3}
        value={text()}
        disabled={props.disabled}
        onInput={(event) => update(event.currentTarget.value)}
        onKeyDown={(event) => {
          if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
            event.preventDefault();
            void send();
          }
          if (event.key === 'Escape' && props.busy) {
            event.preventDefault();
            void props.onStop();
          }
        }}
      />
      <div class="composer-bar">
        <label class="model-picker">
          <span class="visually-hidden">model</span>
          <input
            list={`models-${props.sessionId}`}
            data-testid="model"
            placeholder="default model"
            value={props.model}
            onChange={(event) => props.onModel(event.currentTarget.value.trim())}
          />
          <datalist id={`models-${props.sessionId}`}>
            <For each={props.models}>{(model) => <option value={model} />}</For>
          </datalist>
        </label>
        <Show when={props.queued > 0}>
          <span class="queue" data-testid="queued">
            {props.queued} queued
          </span>
        </Show>
        <span class="spacer" />
        <Show when={props.busy}>
          <button type="button" class="danger" data-testid="stop" onClick={() => void props.onStop()}>
            Stop
          </button>
        </Show>
        <button
          type="submit"
          class="primary"
          data-testid="send"
          disabled={props.disabled || sending() || text().trim() === ''}
        >
          {props.busy ? 'Queue' : 'Send'}
        </button>
      </div>
    </form>
  );
}

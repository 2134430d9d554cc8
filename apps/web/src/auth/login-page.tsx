import { createSignal, Show } from 'solid-js';

/** Asks for a client token: `molf up` prints a link that logs in by itself, and the token beside it. */
export function LoginPage(props: {
  connecting: boolean;
  problem: string | undefined;
  onToken: (token: string) => void;
}) {
  const [token, setToken] = createSignal('');
  return (
    <main class="login">
      <form
        class="login-form"
        onSubmit={(event) => {
          event.preventDefault();
          if (token().trim() !== '') props.onToken(token().trim());
        }}
      >
        <h1>Molf</h1>
        <p class="muted">
          Open the link <code>molf up</code> printed, or paste a client token (<code>molf_c_…</code>).
        </p>
        <Show when={props.problem}>
          {(problem) => (
            <div class="tool-error" role="alert" data-testid="login-problem">
              {problem()}
            </div>
          )}
        </Show>
        <label>
          Client token
          <input
            type="password"
            autocomplete="current-password"
            data-testid="token"
            value={token()}
            onInput={(event) => setToken(event.currentTarget.value)}
          />
        </label>
        <button type="submit" class="primary" disabled={props.connecting || token().trim() === ''}>
          {props.connecting ? 'Connecting…' : 'Log in'}
        </button>
      </form>
    </main>
  );
}

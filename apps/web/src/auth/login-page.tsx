import { createSignal, Show } from 'solid-js';
import { browserCredentialName, redeemCode } from './redeem-code.ts';

/**
 * Asks for a client token (`molf up` prints a link that logs in by itself, and the token beside it),
 * or a pairing code from `molf pair`, traded here for a token of this browser's own.
 */
export function LoginPage(props: {
  connecting: boolean;
  problem: string | undefined;
  onToken: (token: string) => void;
}) {
  const [token, setToken] = createSignal('');
  const [code, setCode] = createSignal('');
  const [redeeming, setRedeeming] = createSignal(false);
  const [codeProblem, setCodeProblem] = createSignal<string | undefined>();
  const redeem = async () => {
    setRedeeming(true);
    setCodeProblem(undefined);
    try {
      props.onToken(await redeemCode(code().trim(), browserCredentialName()));
      setCode('');
    } catch (error) {
      setCodeProblem(error instanceof Error ? error.message : String(error));
    } finally {
      setRedeeming(false);
    }
  };
  return (
    <main class="login">
      <div class="login-box">
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
        <form
          class="login-form"
          data-testid="pairing-form"
          onSubmit={(event) => {
            event.preventDefault();
            if (code().trim() !== '') void redeem();
          }}
        >
          <p class="muted">
            Or a pairing code: run <code>molf pair --role operator</code> (or <code>viewer</code>) on the server.
          </p>
          <Show when={codeProblem()}>
            {(problem) => (
              <div class="tool-error" role="alert" data-testid="pairing-problem">
                {problem()}
              </div>
            )}
          </Show>
          <label>
            Pairing code
            <input
              autocomplete="one-time-code"
              autocapitalize="characters"
              spellcheck={false}
              placeholder="XXXX-XXXX"
              data-testid="pairing-code"
              value={code()}
              onInput={(event) => setCode(event.currentTarget.value)}
            />
          </label>
          <button type="submit" disabled={redeeming() || props.connecting || code().trim() === ''}>
            {redeeming() ? 'Pairing…' : 'Pair this browser'}
          </button>
        </form>
      </div>
    </main>
  );
}

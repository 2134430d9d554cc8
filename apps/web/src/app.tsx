import { createSignal, onMount, Show } from 'solid-js';
import { LoginPage } from './auth/login-page.tsx';
import { forgetToken, storedToken, storeToken, takeTokenFromAddress } from './auth/login-token.ts';
import { connect, type ServerLink } from './link/server-link.ts';
import { Workspace } from './workspace.tsx';

/**
 * The page: a login form until the server accepts a client token (from `molf up`'s link or typed
 * in), then the workspace. A token the server refuses later (revoked) brings the form back.
 */
export function App() {
  const [link, setLink] = createSignal<ServerLink>();
  const [problem, setProblem] = createSignal<string>();
  const [connecting, setConnecting] = createSignal(false);

  const logIn = async (token: string) => {
    setConnecting(true);
    setProblem(undefined);
    try {
      const opened = await connect(token);
      storeToken(token);
      setLink(opened);
    } catch (error) {
      forgetToken();
      setProblem(error instanceof Error ? error.message : String(error));
    } finally {
      setConnecting(false);
    }
  };
  const logOut = async (reason?: string) => {
    forgetToken();
    const current = link();
    setLink(undefined);
    setProblem(reason);
    await current?.close();
  };

  onMount(() => {
    const token = takeTokenFromAddress() ?? storedToken();
    if (token !== undefined) void logIn(token);
  });

  return (
    <Show
      when={link()}
      fallback={<LoginPage connecting={connecting()} problem={problem()} onToken={(token) => void logIn(token)} />}
    >
      {(current) => <Workspace link={current()} onLogOut={(reason) => void logOut(reason)} />}
    </Show>
  );
}

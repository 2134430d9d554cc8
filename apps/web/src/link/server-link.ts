import { createMolfClient, type MolfClient } from '@molf/client';
import { isMolfError, type WhoAmI } from '@molf/protocol';
import { type Accessor, createSignal } from 'solid-js';
import { type Rights, rightsOf } from '../auth/rights.ts';

/** The link to the server as the page shows it. */
export type LinkState =
  | { type: 'connecting' }
  | { type: 'connected' }
  /** It dropped (or cannot be made); the client keeps retrying. */
  | { type: 'reconnecting'; since: number }
  | { type: 'refused'; message: string };

export type ServerLink = {
  client: MolfClient;
  state: Accessor<LinkState>;
  /** Bumped each time the link comes back after a loss: views reload what they show. */
  reconnects: Accessor<number>;
  whoami: WhoAmI;
  /** What this credential's role lets the page offer. */
  rights: Rights;
  close(): Promise<void>;
};

/** The server's WebSocket address: the page is served by the server it talks to. */
export function serverUrl(location: Location = window.location): string {
  return `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/`;
}

/**
 * Connects with a token; rejects with the server's refusal (a wrong or revoked token) so that the
 * page can go back to its login form. Once connected, the link reconnects by itself for ever.
 */
export async function connect(token: string, options: { url?: string } = {}): Promise<ServerLink> {
  const [state, setState] = createSignal<LinkState>({ type: 'connecting' });
  const [reconnects, setReconnects] = createSignal(0);
  const client = createMolfClient({
    url: options.url ?? serverUrl(),
    token,
    client: 'molf-web',
    stopWhenRefused: true,
    // A page in a background tab on a laptop lid closing: retry soon once it is back.
    retryDelayMs: (attempt) => Math.min(500 * 2 ** attempt, 10_000),
    keepAlive: { intervalMs: 15_000, pongTimeoutMs: 8_000 },
    onChange: (change) => {
      switch (change.type) {
        case 'connected':
          setState({ type: 'connected' });
          if (change.again) setReconnects((count) => count + 1);
          break;
        case 'lost':
        case 'unreachable':
          if (state().type !== 'reconnecting') setState({ type: 'reconnecting', since: Date.now() });
          break;
        case 'refused':
          setState({ type: 'refused', message: change.message });
          break;
      }
    },
  });
  try {
    const whoami = await client.ready({ timeoutMs: 15_000 });
    if (whoami.role === 'worker') {
      throw new Error('this token belongs to a worker: log in with a client token (molf up prints one)');
    }
    setState({ type: 'connected' });
    return { client, state, reconnects, whoami, rights: rightsOf(whoami.role), close: () => client.close() };
  } catch (error) {
    await client.close();
    throw new Error(describeLoginError(error));
  }
}

function describeLoginError(error: unknown): string {
  if (isMolfError(error) && error.code === 'unauthorized') {
    return 'The server refused this token: it is wrong or was revoked. Paste a client token (molf up prints a login link).';
  }
  return error instanceof Error ? error.message : String(error);
}

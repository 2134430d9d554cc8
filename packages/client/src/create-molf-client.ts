import { type ErrorCode, ErrorCodeSchema, MolfError, type WhoAmI } from '@molf/protocol';
import type { AppRouter } from '@molf/server/router';
import { createTRPCClient, createWSClient, type TRPCClient, wsLink } from '@trpc/client';
import { answerAcrossReconnects } from './answer-across-reconnects.ts';
import { createBackoff } from './backoff.ts';
import { type ConnectionChange, trackConnection } from './track-connection.ts';

export type ConnectionStatus =
  | { type: 'open' }
  | { type: 'closed' }
  /** The server refused this connection, e.g. an unknown token. The client keeps retrying. */
  | { type: 'rejected'; code: ErrorCode; message: string }
  /**
   * This client refused the server in the TLS handshake, before sending anything; `message` says
   * why and what to do. Only the Node client can tell (a browser sees a failed connection). The
   * client keeps retrying.
   */
  | { type: 'untrusted'; message: string };

export type MolfClientOptions = {
  /** `ws://host:port` of the server. */
  url: string;
  /** A client or worker token; sent as connection params, never in the URL. */
  token: string;
  /**
   * The program's name and version, sent with the token (`molf-cli/0.1.0`, `molf-web/0.1.0`): the
   * server keeps it with the approvals this client answers and shows it with the grants they
   * saved. 1 to 100 characters, no control characters (the server refuses others). Default: not sent.
   */
  client?: string;
  /** Reconnect delay per attempt. Default: 1 s, ×2, max 30 s, ±25 % jitter. */
  retryDelayMs?: (attemptIndex: number) => number;
  /** Every raw event of the link: each open and close, each refusal. */
  onStatus?: (status: ConnectionStatus) => void;
  /**
   * The link's state changes, each reported once however many retries it takes (for logs and
   * people): connected (again), lost, unreachable, refused; none after `close()` (closing is not
   * losing the link). Default: none.
   */
  onChange?: (change: ConnectionChange) => void;
  /**
   * Stop retrying once the server refuses the credential: the client closes itself after
   * reporting the refusal. Default false: a worker keeps retrying, as a server that restarts
   * may answer for a moment without knowing its token.
   */
  stopWhenRefused?: boolean;
  /** Client-side ping; the connection is dropped when no pong comes. Default 30 s / 10 s. */
  keepAlive?: { intervalMs?: number; pongTimeoutMs?: number };
  /**
   * The WebSocket class to connect with, made for the reporter of refusal frames (see
   * `toWebSocketClass`). Default: the platform's `WebSocket` (browsers, Node 22+); the Node entry
   * (`@molf/client/node`) passes one built on `ws`.
   */
  webSocket?: WebSocketClassFactory;
};

/**
 * Makes the WebSocket class the client opens. `onRefusal` must get the text of every frame that
 * starts with `{"id":null` (how the server refuses a connection before it closes it).
 */
export type WebSocketClassFactory = (hooks: {
  onRefusal(text: string): void;
  /** The client's pong timeout: a close handshake with a dead peer need not wait longer. */
  closeTimeoutMs: number;
  /** Call when the socket refused the server in its TLS handshake, with why, for a person. */
  onUntrusted(message: string): void;
}) => typeof WebSocket;

/** Whether a text frame is the server refusing the connection. */
export function isRefusalFrame(text: string): boolean {
  return text.startsWith('{"id":null');
}

/** The default: the platform's WebSocket, reading each text frame for a refusal. */
const platformWebSocket: WebSocketClassFactory = ({ onRefusal }) =>
  class MolfWebSocket extends globalThis.WebSocket {
    constructor(url: string | URL, protocols?: ConstructorParameters<typeof WebSocket>[1]) {
      super(url, protocols);
      this.addEventListener('message', (event: MessageEvent) => {
        if (typeof event.data === 'string' && isRefusalFrame(event.data)) onRefusal(event.data);
      });
    }
  };

export type MolfClient = AsyncDisposable & {
  rpc: TRPCClient<AppRouter>;
  /** Resolves once the server accepted the credential; rejects with `unauthorized` if it refused. */
  ready(options?: { timeoutMs?: number }): Promise<WhoAmI>;
  close(): Promise<void>;
};

type Rejection = { code: ErrorCode; message: string };

/**
 * The typed client shared by the CLI, the web client and the worker: tRPC v11 over one
 * WebSocket, with auth in the connection params and automatic reconnect. Subscriptions that use
 * tracked ids resume after a reconnect from the last id they saw; a query cut off by a lost
 * connection is sent again once the link is back (see `answerAcrossReconnects`). Free of Node-only
 * modules: in Node, `@molf/client/node` adds the `ws` socket with its payload limit and close timeout.
 */
export function createMolfClient(options: MolfClientOptions): MolfClient {
  const pingIntervalMs = options.keepAlive?.intervalMs ?? 30_000;
  const pongTimeoutMs = options.keepAlive?.pongTimeoutMs ?? 10_000;
  let lastRejection: Rejection | undefined;
  const rejectionListeners = new Set<(rejection: Rejection) => void>();
  /** Why the last attempt refused the server in its TLS handshake, if it did. */
  let lastUntrusted: string | undefined;
  const untrustedListeners = new Set<(message: string) => void>();

  /**
   * Set as `close()` starts, before tRPC's close runs: that fails the calls not sent yet from
   * within, and a call the link cut off must not be sent again then (that would reopen the link,
   * and keep the process alive).
   */
  let closing = false;
  const track = trackConnection();
  const report = (status: ConnectionStatus | { type: 'accepted' }) => {
    if (status.type === 'open') lastUntrusted = undefined;
    if (status.type !== 'accepted') options.onStatus?.(status);
    const change = track(status);
    // A link this client closes itself is not lost: no change is told once close() was called.
    if (change !== undefined && !closing) options.onChange?.(change);
  };

  const reportRejection = (data: unknown) => {
    const rejection = toRejection(data);
    if (rejection === undefined) return;
    lastRejection = rejection;
    report({ type: 'rejected', ...rejection });
    for (const listener of rejectionListeners) listener(rejection);
    // Retrying the same credential only gets the same answer.
    if (options.stopWhenRefused === true) void close();
  };

  const reportUntrusted = (message: string) => {
    lastUntrusted = message;
    report({ type: 'untrusted', message });
    for (const listener of untrustedListeners) listener(message);
  };

  // The server answers a refused connection with an error whose id is null and then closes;
  // tRPC's client only retries, so the socket class reads that frame to report it.
  const SocketClass = (options.webSocket ?? platformWebSocket)({
    onRefusal: reportRejection,
    closeTimeoutMs: pongTimeoutMs,
    onUntrusted: reportUntrusted,
  });

  const wsClient = createWSClient({
    url: options.url,
    WebSocket: SocketClass,
    connectionParams: { token: options.token, ...(options.client === undefined ? {} : { client: options.client }) },
    retryDelayMs: options.retryDelayMs ?? createBackoff(),
    keepAlive: {
      enabled: true,
      intervalMs: pingIntervalMs,
      pongTimeoutMs,
    },
    onOpen: () => {
      report({ type: 'open' });
      // An open socket is not yet an accepted credential (a refused one opens too): one small
      // call proves it, so that "connected" is reported only when it is true.
      if (options.onChange !== undefined && !closing) {
        rpc.auth.whoami.query().then(
          () => report({ type: 'accepted' }),
          () => {},
        );
      }
    },
    onClose: () => report({ type: 'closed' }),
  });
  let closed: Promise<void> | undefined;
  const rpc = createTRPCClient<AppRouter>({
    links: [
      ...answerAcrossReconnects<AppRouter>({ url: options.url, isClosed: () => closing }),
      wsLink({ client: wsClient }),
    ],
  });

  const close = () => {
    closing = true;
    closed ??= wsClient.close();
    return closed;
  };

  return {
    rpc,
    async ready({ timeoutMs = 5_000 } = {}) {
      lastRejection = undefined;
      let onRejection: ((rejection: Rejection) => void) | undefined;
      let onUntrusted: ((message: string) => void) | undefined;
      let timer: ReturnType<typeof setTimeout> | undefined;
      try {
        return await Promise.race([
          rpc.auth.whoami.query(),
          new Promise<never>((_, reject) => {
            onRejection = (rejection) => reject(new MolfError(rejection.code, rejection.message));
            rejectionListeners.add(onRejection);
          }),
          // Retrying a server this client does not trust only refuses it again: say why at once.
          new Promise<never>((_, reject) => {
            onUntrusted = (message) => reject(new MolfError('server_untrusted', message));
            if (lastUntrusted !== undefined) onUntrusted(lastUntrusted);
            else untrustedListeners.add(onUntrusted);
          }),
          new Promise<never>((_, reject) => {
            timer = setTimeout(
              () =>
                reject(
                  lastRejection === undefined
                    ? new MolfError(
                        'timeout',
                        `cannot reach the Molf server at ${options.url} (waited ${timeoutMs} ms): ` +
                          'is it running, and is that its address?',
                      )
                    : new MolfError(lastRejection.code, lastRejection.message),
                ),
              timeoutMs,
            );
          }),
        ]);
      } finally {
        clearTimeout(timer);
        if (onRejection !== undefined) rejectionListeners.delete(onRejection);
        if (onUntrusted !== undefined) untrustedListeners.delete(onUntrusted);
      }
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}

function toRejection(text: unknown): Rejection | undefined {
  try {
    const message = JSON.parse(String(text)) as {
      error?: { message?: unknown; data?: { code?: unknown } };
    };
    if (message.error === undefined) return undefined;
    const code = ErrorCodeSchema.safeParse(message.error.data?.code);
    return {
      code: code.success ? code.data : 'internal',
      message: typeof message.error.message === 'string' ? message.error.message : 'the server refused the connection',
    };
  } catch {
    return undefined;
  }
}

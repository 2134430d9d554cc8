import { createMolfClient, type MolfClient, probeServerCertificate, type ServerTrust } from '@molf/client/node';
import { MolfError, type WhoAmI } from '@molf/protocol';
import { CLI_CLIENT_NAME } from './cli-version.ts';

/** How often a client command retries a server it cannot reach, while `ready()` waits. */
const CLIENT_RETRY_MS = 250;

/**
 * What a line about the link tells: the link is back, it was lost, the token was refused, or only a
 * note (which server is used).
 */
export type LinkChangeKind = 'connected' | 'lost' | 'refused' | 'note';
/** Takes the lines about the link for people, with what each tells. */
export type LinkTeller = (line: string, kind: LinkChangeKind) => void;

export type ConnectClientOptions = {
  url: string;
  token: string;
  /** How a `wss://` server is verified before the token is sent (see `resolveClientConnection`). */
  trust?: ServerTrust | undefined;
  /** How long to wait for the server to answer. Default: `ready()`'s (5 s). */
  timeoutMs?: number;
  /** Give up at the first attempt that cannot connect instead of retrying until `timeoutMs`. Default false. */
  failFast?: boolean;
  /**
   * Once connected, the link's changes for people, one line each however many retries they take
   * (lost, reconnected, refused). Default: not told.
   */
  onLinkChange?: LinkTeller;
  /** Once connected, the server refused the token (it restarted with others): the client has stopped. */
  onRefused?: (error: MolfError) => void;
};

/** A client whose credential the server accepted, with what the server said of it (its role). */
export type ConnectedClient = MolfClient & { whoami: WhoAmI };

/**
 * A client of `url` whose credential the server has accepted. When the server can't be reached
 * (or refuses the token) the client is closed before the error is thrown: its reconnect timer
 * would otherwise keep the process alive after the command has failed. A token refused later
 * stops the client too: retrying it would only be refused again.
 */
export async function connectClient(options: ConnectClientOptions): Promise<ConnectedClient> {
  const { url } = options;
  let connected = false;
  const unreachable = Promise.withResolvers<never>();
  unreachable.promise.catch(() => {});
  const client = createMolfClient({
    url,
    token: options.token,
    ...(options.trust === undefined ? {} : { trust: options.trust }),
    client: CLI_CLIENT_NAME,
    retryDelayMs: () => CLIENT_RETRY_MS,
    stopWhenRefused: true,
    onChange(change) {
      if (!connected) {
        if (change.type === 'unreachable' && options.failFast === true) {
          unreachable.reject(new MolfError('timeout', `cannot reach the Molf server at ${url}`));
        }
        return;
      }
      switch (change.type) {
        case 'connected':
          if (change.again) options.onLinkChange?.(`reconnected to the server at ${url}`, 'connected');
          break;
        case 'lost':
          options.onLinkChange?.(`connection to the server at ${url} lost; reconnecting until it is back`, 'lost');
          break;
        case 'unreachable':
          // After a loss the line for it is out already; nothing new to tell.
          break;
        case 'untrusted':
          // The client keeps retrying: a server that shows the trusted certificate again gets it back.
          options.onLinkChange?.(change.message, 'lost');
          break;
        case 'refused': {
          const error = new MolfError(
            change.code,
            `the server at ${url} refused this client's token (${change.message}); stopping. ` +
              'If `molf up` was started again without its saved connection, run the command again.',
          );
          options.onLinkChange?.(error.message, 'refused');
          options.onRefused?.(error);
          break;
        }
        default:
          change satisfies never;
      }
    },
  });
  try {
    const whoami = await Promise.race([
      client.ready(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
      unreachable.promise,
    ]);
    connected = true;
    return { ...client, whoami };
  } catch (error) {
    await client.close();
    throw (await diagnosePlainLinkToTls(url, error)) ?? error;
  }
}

/**
 * For a `ws://` URL that did not answer as a Molf server: whether the port speaks TLS, in which case
 * the person meant `wss://` (a server on another machine serves TLS by default).
 */
async function diagnosePlainLinkToTls(url: string, error: unknown): Promise<MolfError | undefined> {
  if (!url.startsWith('ws://') || (error instanceof MolfError && error.code !== 'timeout')) return undefined;
  const secure = `wss://${url.slice('ws://'.length)}`;
  const probe = await probeServerCertificate(secure, { timeoutMs: 2_000 }).catch(() => undefined);
  if (probe?.type !== 'tls') return undefined;
  return new MolfError(
    'invalid_input',
    `the server at ${url} speaks TLS: connect to ${secure.replace(/\/$/, '')} instead (its certificate is verified first)`,
    { field: 'server' },
  );
}

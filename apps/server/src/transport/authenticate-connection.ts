import type { Logger } from '@molf/logging';
import { ConnectionParamsSchema, isMolfError, MolfError } from '@molf/protocol';
import type { CredentialStore, Verified } from '../auth/credential-store.ts';
import { kindFromPrefix } from '../auth/tokens.ts';

export type AuthenticateConnectionOptions = {
  /** Checks the token: `verify` first, `verifyLatest` for a token it does not know. */
  credentials: Pick<CredentialStore, 'verify' | 'verifyLatest'>;
  logger: Logger;
  /** What the peer sent as tRPC connection params, not yet validated. */
  connectionParams: unknown;
  /** For the log lines of a refusal. */
  remoteAddress: string | undefined;
  /**
   * Asked once the credential is known: whether the socket may still be served. The connection
   * guard says no for a socket it refused or timed out meanwhile. Default: always.
   */
  admit?: (credentialId: string) => boolean;
};

/** A connection's credential, and the client program it named (`molf-cli/0.1.0`) if it did. */
export type Authenticated = Verified & { client?: string };

/**
 * The token check of a new connection: its connection params to the credential they carry, or a
 * `MolfError` — `unauthorized` (no token, an unknown one, a socket the guard refused),
 * `invalid_input` (a client name that is too long or holds control characters) or `internal`
 * (the credentials cannot be read: nobody gets in, and the message says why).
 *
 * A token the credentials as known let in is admitted before this function first waits, so that
 * a caller running it from the connection-params message raises the socket's limits before the
 * next message is read. A token they do not know is looked up again in the credentials as they
 * are now: on PostgreSQL, one made a moment ago on another instance may not be known here yet.
 */
export async function authenticateConnection(options: AuthenticateConnectionOptions): Promise<Authenticated> {
  const { logger, remoteAddress } = options;
  const params = ConnectionParamsSchema.safeParse(options.connectionParams ?? {});
  if (!params.success) {
    const clientIssue = params.error.issues.every((issue) => issue.path[0] === 'client');
    if (clientIssue) {
      logger.warn({ remoteAddress }, 'connection refused: invalid client name');
      throw new MolfError(
        'invalid_input',
        'invalid client name in the connection params: 1 to 100 characters, no control characters (e.g. "molf-cli/0.1.0")',
        { field: 'client' },
      );
    }
    logger.warn({ remoteAddress }, 'connection refused: no token');
    throw new MolfError('unauthorized', 'no token: connect with a client or worker token in the connection params');
  }
  const unreadable = (error: unknown) => {
    logger.error({ err: error }, 'connection refused: the credentials cannot be read');
    return new MolfError('internal', isMolfError(error) ? error.message : 'the server cannot read its credentials', {
      cause: error,
    });
  };
  const { token } = params.data;
  let verified: Verified | undefined;
  try {
    verified = options.credentials.verify(token);
  } catch (error) {
    throw unreadable(error);
  }
  if (verified === undefined) {
    try {
      verified = await options.credentials.verifyLatest(token);
    } catch (error) {
      throw unreadable(error);
    }
  }
  if (verified === undefined) {
    const claimed = kindFromPrefix(token);
    logger.warn({ remoteAddress, claimedKind: claimed }, 'connection refused: unknown token');
    throw new MolfError(
      'unauthorized',
      `invalid token: this server does not know that ${claimed === undefined ? '' : `${claimed} `}token`,
    );
  }
  if (options.admit !== undefined && !options.admit(verified.credentialId)) {
    throw new MolfError('unauthorized', 'this connection was refused before it authenticated');
  }
  return params.data.client === undefined ? verified : { ...verified, client: params.data.client };
}

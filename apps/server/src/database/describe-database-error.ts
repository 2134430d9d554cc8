import { isMolfError, MolfError } from '@molf/protocol';

/** PostgreSQL's error codes (SQLSTATE) that a person can act on, in their words. */
const SQLSTATE_REASONS: Record<string, string> = {
  '28P01': 'the password was refused',
  '28000': 'the login was refused (no pg_hba.conf entry allows it)',
  '3D000': 'that database does not exist (create it first: createdb)',
  '42501': 'the user lacks a privilege Molf needs (it must be able to create tables in the database)',
  '53300': 'the database has no free connection (max_connections)',
  '57P01': 'the database was shut down',
  '57P03': 'the database is starting or shutting down',
};

/** Node's and the driver's connection error codes. */
const CONNECTION_REASONS: Record<string, string> = {
  ECONNREFUSED: 'nothing accepts connections at that host and port',
  ENOTFOUND: 'that host name is unknown',
  EAI_AGAIN: 'that host name cannot be resolved now',
  EHOSTUNREACH: 'that host is unreachable',
  ENETUNREACH: 'that network is unreachable',
  ETIMEDOUT: 'the connection timed out',
  ECONNRESET: 'the connection was reset',
  CONNECT_TIMEOUT: 'the connection timed out',
  CONNECTION_CLOSED: 'the connection was closed',
  CONNECTION_ENDED: 'the connection was ended',
  CONNECTION_DESTROYED: 'the connection was lost',
};

/** Why a database operation failed, in a person's words (never with the password). */
export function describeDatabaseError(error: unknown): string {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (typeof code === 'string') {
    const reason = SQLSTATE_REASONS[code] ?? CONNECTION_REASONS[code];
    if (reason !== undefined) return reason;
  }
  return typeof message === 'string' && message !== '' ? message : String(error);
}

/**
 * Whether the error means the database cannot be reached (rather than a refused statement): the
 * driver's, or what `failsAsUnavailable` made of it.
 */
export function isConnectionError(error: unknown): boolean {
  if (isMolfError(error)) return error.code === 'database_unavailable';
  const { code } = (error ?? {}) as { code?: unknown };
  return typeof code === 'string' && (code in CONNECTION_REASONS || code === '57P01' || code === '57P03');
}

/**
 * Runs a database operation; a lost or refused connection becomes `database_unavailable`, which
 * tells a client that nothing changed and that trying again later may work.
 */
export async function failsAsUnavailable<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    if (!isMolfError(error) && isConnectionError(error)) {
      throw new MolfError('database_unavailable', `the database cannot be reached: ${describeDatabaseError(error)}`, {
        cause: error,
      });
    }
    throw error;
  }
}

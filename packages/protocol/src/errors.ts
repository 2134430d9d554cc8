import { z } from 'zod';

/**
 * The closed set of error codes that cross a process boundary. Clients branch on these,
 * never on message text.
 */
export const ErrorCodeSchema = z.enum([
  'unauthorized',
  'forbidden',
  'invalid_input',
  'not_found',
  'worker_not_found',
  'worker_offline',
  'worker_restarted',
  'worker_replaced',
  'job_not_found',
  'tool_not_found',
  'timeout',
  'cancelled',
  'workdir_invalid',
  'config_invalid',
  'permissions_invalid',
  'approval_not_found',
  /** No rule of the worker's permissions file carries that grant id (revoked, or deleted by hand). */
  'grant_not_found',
  'conflict',
  'session_not_found',
  /** The session's stored state cannot be read (its metadata and history are both damaged). */
  'session_damaged',
  'model_not_configured',
  'model_not_found',
  'provider_error',
  'busy',
  /** More than one answer may carry (an attachment over the fetch limit). */
  'too_large',
  'address_in_use',
  /** `molf worker --sandbox required` and the sandbox's self-test failed. */
  'sandbox_failed',
  /**
   * The server's TLS certificate is not one this client trusts (unknown, changed, or not matching a
   * given fingerprint or CA): nothing was sent to it.
   */
  'server_untrusted',
  /** The server cannot reach its database now: nothing was changed; try again. */
  'database_unavailable',
  'internal',
]);
export type ErrorCode = z.infer<typeof ErrorCodeSchema>;

/** The `data` part of an RPC error as clients see it. */
export const ErrorDataSchema = z.object({
  code: ErrorCodeSchema,
  /** For `invalid_input`: the dotted path of the first failing field, e.g. `result.output`. */
  field: z.string().optional(),
});
export type ErrorData = z.infer<typeof ErrorDataSchema>;

/**
 * The one application error type. `code` is machine-readable; `message` is for people.
 * Converted to a tRPC error by a single middleware on the server.
 */
export class MolfError extends Error {
  readonly code: ErrorCode;
  readonly field: string | undefined;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown; field?: string }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'MolfError';
    this.code = code;
    this.field = options?.field;
  }
}

export function isMolfError(value: unknown): value is MolfError {
  return value instanceof MolfError;
}

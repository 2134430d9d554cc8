import type { IncomingMessage } from 'node:http';
import {
  type ClientRole,
  type ErrorCode,
  type ErrorData,
  isMolfError,
  type MolfError,
  type Role,
  roleAllows,
  roleWithArticle,
} from '@molf/protocol';
import { initTRPC, TRPCError } from '@trpc/server';
import type { TRPC_ERROR_CODE_KEY } from '@trpc/server/rpc';

export type RpcContext = {
  role: Role;
  credentialId: string;
  connectionId: string;
  /** The client program the connection named in its params (`molf-cli/0.1.0`); undefined if it did not. */
  client?: string | undefined;
  remoteAddress: string | undefined;
  request: IncomingMessage;
};

const TRPC_CODE: Record<ErrorCode, TRPC_ERROR_CODE_KEY> = {
  unauthorized: 'UNAUTHORIZED',
  forbidden: 'FORBIDDEN',
  invalid_input: 'BAD_REQUEST',
  not_found: 'NOT_FOUND',
  worker_not_found: 'NOT_FOUND',
  worker_offline: 'PRECONDITION_FAILED',
  worker_restarted: 'CONFLICT',
  worker_replaced: 'CONFLICT',
  job_not_found: 'NOT_FOUND',
  tool_not_found: 'NOT_FOUND',
  timeout: 'TIMEOUT',
  cancelled: 'CLIENT_CLOSED_REQUEST',
  workdir_invalid: 'BAD_REQUEST',
  config_invalid: 'INTERNAL_SERVER_ERROR',
  permissions_invalid: 'BAD_REQUEST',
  approval_not_found: 'NOT_FOUND',
  grant_not_found: 'NOT_FOUND',
  conflict: 'CONFLICT',
  session_not_found: 'NOT_FOUND',
  session_damaged: 'INTERNAL_SERVER_ERROR',
  model_not_configured: 'PRECONDITION_FAILED',
  model_not_found: 'BAD_REQUEST',
  provider_error: 'BAD_GATEWAY',
  busy: 'TOO_MANY_REQUESTS',
  too_large: 'PAYLOAD_TOO_LARGE',
  address_in_use: 'INTERNAL_SERVER_ERROR',
  sandbox_failed: 'INTERNAL_SERVER_ERROR',
  server_untrusted: 'FORBIDDEN',
  database_unavailable: 'SERVICE_UNAVAILABLE',
  internal: 'INTERNAL_SERVER_ERROR',
};

/** The one place application errors become RPC errors. */
export function toTRPCError(error: MolfError): TRPCError {
  return new TRPCError({ code: TRPC_CODE[error.code], message: error.message, cause: error });
}

type Issue = { path?: ReadonlyArray<PropertyKey | { key: PropertyKey }>; message: string };

function firstIssue(cause: unknown): Issue | undefined {
  const issues = (cause as { issues?: unknown } | undefined)?.issues;
  return Array.isArray(issues) && issues.length > 0 ? (issues[0] as Issue) : undefined;
}

function pathToString(path: Issue['path']): string {
  return (path ?? []).map((part) => String(typeof part === 'object' ? part.key : part)).join('.');
}

const t = initTRPC.context<RpcContext>().create({
  errorFormatter({ shape, error }) {
    let data: ErrorData;
    if (isMolfError(error.cause)) {
      data = { code: error.cause.code, ...(error.cause.field === undefined ? {} : { field: error.cause.field }) };
    } else if (error.code === 'BAD_REQUEST' && firstIssue(error.cause) !== undefined) {
      const issue = firstIssue(error.cause) as Issue;
      const field = pathToString(issue.path);
      data = { code: 'invalid_input', field };
      return {
        ...shape,
        message: `invalid input${field === '' ? '' : ` at "${field}"`}: ${issue.message}`,
        data: { ...shape.data, ...data, stack: undefined },
      };
    } else if (error.code === 'UNAUTHORIZED') {
      data = { code: 'unauthorized' };
    } else if (error.code === 'FORBIDDEN') {
      data = { code: 'forbidden' };
    } else if (error.code === 'BAD_REQUEST' || error.code === 'PARSE_ERROR') {
      data = { code: 'invalid_input' };
    } else {
      data = { code: 'internal' };
    }
    return { ...shape, data: { ...shape.data, ...data, stack: undefined } };
  },
});

/** Who may call a procedure: a client role (that level or above), a worker, or anyone authenticated. */
export type CallerNeeded = ClientRole | 'worker' | 'any';

function allows(role: Role, needed: CallerNeeded): boolean {
  if (needed === 'any') return true;
  if (needed === 'worker') return role === 'worker';
  return roleAllows(role, needed);
}

function refusal(role: Role, needed: CallerNeeded): string {
  if (needed === 'worker') return `this call is for workers; the connection uses ${roleWithArticle(role)} credential`;
  const above = needed === 'admin' ? '' : needed === 'operator' ? ' or admin' : ', operator or admin';
  if (role === 'worker') {
    return `this call is for clients: it needs the ${needed}${above} role; the connection uses a worker credential`;
  }
  return `this call needs the ${needed}${above} role; the connection's credential is ${roleWithArticle(role)}`;
}

/**
 * The one middleware every procedure runs: checks the connection's role and gives an application
 * error the RPC code that matches its string code. One middleware, not two, because tRPC copies
 * the call's options at each step of the chain (measured in `pnpm bench`).
 */
function guard(needed: CallerNeeded) {
  return t.middleware(async ({ ctx, next }) => {
    if (!allows(ctx.role, needed)) throw new TRPCError({ code: 'FORBIDDEN', message: refusal(ctx.role, needed) });
    const result = await next();
    if (!result.ok && result.error.code === 'INTERNAL_SERVER_ERROR' && isMolfError(result.error.cause)) {
      throw toTRPCError(result.error.cause);
    }
    return result;
  });
}

export const router = t.router;
/** Any authenticated connection, worker or client. */
export const anyRoleProcedure = t.procedure.use(guard('any'));
/** Reading sessions, their events, workers and pending approvals: every client role. */
export const viewerProcedure = t.procedure.use(guard('viewer'));
/** Driving sessions and answering approvals: operator and admin. */
export const operatorProcedure = t.procedure.use(guard('operator'));
/** Rules, credentials and pairing: admin only. */
export const adminProcedure = t.procedure.use(guard('admin'));
export const workerProcedure = t.procedure.use(guard('worker'));

import { type Operation, retryLink, TRPCClientError, type TRPCLink } from '@trpc/client';
import type { AnyTRPCRouter } from '@trpc/server';
import { observable } from '@trpc/server/observable';

/** How many times a query is sent in all when each time the link is lost before the server answers. */
export const MAX_QUERY_ATTEMPTS = 3;

export type AnswerAcrossReconnectsOptions = {
  /** The server's address, for the error a person reads. */
  url: string;
  /** Whether the client was closed: a call it cut off is not sent again (that would reopen it). */
  isClosed(): boolean;
  /** Default `MAX_QUERY_ATTEMPTS` (3). */
  maxQueryAttempts?: number;
};

/**
 * Whether a call failed because its socket closed before the server answered, rather than by the
 * server's answer. tRPC's WebSocket client fails such a call with the socket's close (or error)
 * event as the cause, which has no message, so its own message is "Unknown error".
 */
export function isLostLinkError(error: unknown): boolean {
  if (!(error instanceof TRPCClientError) || error.shape !== undefined) return false;
  const cause: unknown = error.cause;
  if (cause instanceof Error) return cause.name === 'TRPCWebSocketClosedError';
  const type = (cause as { type?: unknown } | undefined)?.type;
  return (type === 'close' || type === 'error') && typeof cause === 'object' && cause !== null && 'target' in cause;
}

/**
 * The links in front of the WebSocket link that carry calls across a lost connection (a server
 * restart, a network drop):
 * - a query whose socket closed before the server answered is sent again, and so waits for the
 *   client's reconnect like a query sent while the link is down; a query only reads, so sending it
 *   twice changes nothing. Up to `maxQueryAttempts` in all, so that a query whose answer itself
 *   breaks the link (one over the payload limit) cannot loop.
 * - a call that still fails so says what happened instead of tRPC's "Unknown error"; a mutation
 *   is never sent again, as the server may have done it.
 * Subscriptions are not concerned: the WebSocket client sends them again after a reconnect. Once
 * the client is closed, nothing is sent again.
 */
export function answerAcrossReconnects<TRouter extends AnyTRPCRouter>(
  options: AnswerAcrossReconnectsOptions,
): TRPCLink<TRouter>[] {
  const maxQueryAttempts = options.maxQueryAttempts ?? MAX_QUERY_ATTEMPTS;
  const describeLostLink: TRPCLink<TRouter> =
    () =>
    ({ op, next }) =>
      observable((observer) => {
        const subscription = next(op).subscribe({
          next: (envelope) => observer.next(envelope),
          error: (error) =>
            observer.error(
              isLostLinkError(error) ? toLostLinkError(error, op, { ...options, maxQueryAttempts }) : error,
            ),
          complete: () => observer.complete(),
        });
        return () => subscription.unsubscribe();
      });
  /** Queries to be sent again (the same operation object goes to each attempt). */
  const resent = new WeakSet<Operation>();
  // The client may close between a query's failure and its next attempt: sent then, it would
  // reopen the link (tRPC's client opens again for any call), which keeps the process alive.
  const notAfterClose: TRPCLink<TRouter> =
    () =>
    ({ op, next }) =>
      observable((observer) => {
        if (resent.has(op) && options.isClosed()) {
          observer.error(
            new TRPCClientError(`this client was closed before the server at ${options.url} answered ${op.path}`),
          );
          return undefined;
        }
        const subscription = next(op).subscribe(observer);
        return () => subscription.unsubscribe();
      });
  return [
    describeLostLink,
    retryLink<TRouter>({
      retry: ({ op, error, attempts }) => {
        const again =
          op.type === 'query' && attempts < maxQueryAttempts && !options.isClosed() && isLostLinkError(error);
        if (again) resent.add(op);
        return again;
      },
      // Sent again once the close event that failed it has run: its listener starts the
      // reconnect, which the query then waits for (sent from within the event, it would reopen
      // the lost socket beside the reconnect's).
      retryDelayMs: () => 1,
    }),
    notAfterClose,
  ];
}

function toLostLinkError(
  error: TRPCClientError<AnyTRPCRouter>,
  op: Operation,
  options: AnswerAcrossReconnectsOptions & { maxQueryAttempts: number },
): TRPCClientError<AnyTRPCRouter> {
  const { maxQueryAttempts } = options;
  const server = `the server at ${options.url}`;
  let message: string;
  if (options.isClosed()) {
    message = `this client was closed before ${server} answered ${op.path}`;
  } else if (op.type === 'mutation') {
    message = `the connection to ${server} was lost before it answered ${op.path}: it may or may not have been done`;
  } else if (op.type === 'query') {
    message = `the connection to ${server} was lost ${maxQueryAttempts} times before it answered ${op.path}`;
  } else {
    message = `the connection to ${server} was lost before it answered ${op.path}`;
  }
  return new TRPCClientError(message, { cause: error });
}

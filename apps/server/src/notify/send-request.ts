import type { OutgoingRequest } from './outgoing-request.ts';

/** How long a target may take to answer, by default. */
export const DEFAULT_SEND_TIMEOUT_MS = 10_000;

/** Why a request failed, in words safe to log: no header, token or body. */
function describeFailure(error: unknown, timeoutMs: number): string {
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) {
    return error.name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : 'cancelled (server stopping)';
  }
  // fetch fails with "fetch failed"; what went wrong is its cause (ECONNREFUSED, a redirect…).
  const cause = error instanceof Error ? (error.cause as { code?: unknown; message?: unknown } | undefined) : undefined;
  if (typeof cause?.code === 'string') return cause.code;
  if (typeof cause?.message === 'string') return cause.message;
  return error instanceof Error ? error.message : String(error);
}

/**
 * POSTs one request with Node's `fetch`; never throws. A target that does not answer within
 * `timeoutMs` (default 10 s) is given up; the response body is not read.
 */
export async function sendRequest(options: {
  request: OutgoingRequest;
  timeoutMs?: number;
  /** Aborts the request (the server is stopping). */
  signal?: AbortSignal;
}): Promise<{ ok: true } | { ok: false; error: string }> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_SEND_TIMEOUT_MS;
  const signals = [AbortSignal.timeout(timeoutMs), ...(options.signal === undefined ? [] : [options.signal])];
  try {
    const response = await fetch(options.request.url, {
      method: 'POST',
      headers: options.request.headers,
      body: options.request.body,
      signal: AbortSignal.any(signals),
      // A redirect would carry the configured headers to wherever it points.
      redirect: 'error',
    });
    // The body is not needed; cancelling it frees the connection.
    await response.body?.cancel().catch(() => undefined);
    return response.ok ? { ok: true } : { ok: false, error: `HTTP ${response.status}` };
  } catch (error) {
    return { ok: false, error: describeFailure(error, timeoutMs) };
  }
}

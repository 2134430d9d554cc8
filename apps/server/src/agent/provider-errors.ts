/** What providers say when a request is longer than the model's context window. */
const CONTEXT_OVERFLOW =
  /context[ _-]?length|context window|maximum context|too many tokens|prompt is too long|input is too long|token limit|exceeds the (?:maximum|limit)|reduce the length/i;

/** Whether a provider refused the request as longer than the model's context window. */
export function isContextOverflow(error: unknown): boolean {
  const body = (error as { responseBody?: unknown }).responseBody;
  return CONTEXT_OVERFLOW.test(
    `${error instanceof Error ? error.message : String(error)} ${typeof body === 'string' ? body : ''}`,
  );
}

/** A provider failure as people read it: the HTTP status when there is one, and the message. */
export function describeProviderError(error: unknown): string {
  if (error instanceof Error) {
    const status = (error as { statusCode?: number }).statusCode;
    return status === undefined ? error.message : `HTTP ${status}: ${error.message}`;
  }
  return String(error);
}

/** What went wrong, for a person: the server's message of an RPC error, or the error's own. */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}

/** The Molf error code of an RPC error, when the server sent one (`session_not_found`, `unauthorized`…). */
export function errorCode(error: unknown): string | undefined {
  const data = (error as { data?: { code?: unknown } } | undefined)?.data;
  return typeof data?.code === 'string' ? data.code : undefined;
}

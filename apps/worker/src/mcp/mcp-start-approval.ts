/**
 * What the MCP manager asks before it starts a server that is new or changed in `.mcp.json`:
 * writing that file is an ordinary file write, but the hot reload turns it into running a command.
 */
export type McpStartRequest = {
  name: string;
  /** The server's definition as written in `.mcp.json` (defaults filled in, `${VAR}` not interpolated). */
  definition: Record<string, unknown>;
  /** `name: command line #digest`: what a person approves, and what an "always" rule matches. */
  subject: string;
  /** Aborted when the answer is no longer needed: the server was removed or changed, or the manager closes. */
  signal: AbortSignal;
};

export type McpStartDecision = { type: 'allow' } | { type: 'deny'; reason: string };

/** Decides whether a server may start; may wait for a person for a long time. */
export type McpStartApprover = (request: McpStartRequest) => Promise<McpStartDecision>;

/**
 * The approver's decision, or undefined once `request.signal` is aborted, whether or not the
 * approver honours the signal (closing the manager must never wait for a person). An approver
 * that fails denies: a server is never started because asking went wrong.
 */
export async function awaitStartDecision(
  approver: McpStartApprover,
  request: McpStartRequest,
): Promise<McpStartDecision | undefined> {
  const { signal } = request;
  if (signal.aborted) return undefined;
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<undefined>((resolve) => {
    onAbort = () => resolve(undefined);
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    const decision = await Promise.race([
      approver(request).catch(
        (error: unknown): McpStartDecision => ({
          type: 'deny',
          reason: `asking for approval failed: ${(error as Error).message}`,
        }),
      ),
      aborted,
    ]);
    return signal.aborted ? undefined : decision;
  } finally {
    if (onAbort !== undefined) signal.removeEventListener('abort', onAbort);
  }
}

import type { MolfClient } from '@molf/client';
import type { Logger } from '@molf/logging';
import type { McpServerApprovalAnswer, WorkerId } from '@molf/protocol';
import type { McpStartApprover, McpStartDecision } from './mcp-start-approval.ts';

/** How long a question may go unanswered before the worker says, in its log, how to answer it. */
const EXPLAIN_AFTER_MS = 1_000;

/** Delay before asking again after a failed request while the link stayed up. */
const RETRY_MS = 2_000;

/** Resolves at the first of: the promise, the delay, the abort. Never rejects. */
function waitAny(options: { promise?: Promise<unknown>; delayMs?: number; signal: AbortSignal }): Promise<void> {
  return new Promise<void>((resolve) => {
    let timer: NodeJS.Timeout | undefined;
    const done = () => {
      clearTimeout(timer);
      options.signal.removeEventListener('abort', done);
      resolve();
    };
    if (options.signal.aborted) return done();
    options.signal.addEventListener('abort', done, { once: true });
    if (options.delayMs !== undefined) timer = setTimeout(done, options.delayMs);
    options.promise?.then(done, done);
  });
}

/**
 * The worker's approver of MCP server starts: it asks the server's approval gate
 * (`worker.mcpServerApproval`), which decides by rule or asks a person, and keeps asking across
 * dropped links until it gets a decision. A question the worker no longer needs is withdrawn.
 */
export function createServerMcpStartApprover(options: {
  client: MolfClient;
  workerId: WorkerId;
  workdir: string;
  logger: Logger;
  /** Resolves at the first registration: the gate asks nobody about an offline worker. */
  registered: Promise<void>;
  /** Registrations so far. */
  registrations: () => number;
  /** Resolves at the next registration. */
  nextRegistration: () => Promise<void>;
  /** True while the worker closes: the server ends the questions of an offline worker itself. */
  isStopping: () => boolean;
}): McpStartApprover {
  const { client, workerId, logger } = options;
  return async (request): Promise<McpStartDecision> => {
    const { signal } = request;
    const input = { workerId, name: request.name, definition: request.definition };
    const withdrawn: McpStartDecision = { type: 'deny', reason: 'the question was withdrawn' };
    const onAbort = () => {
      if (options.isStopping()) return;
      client.rpc.worker.mcpServerApprovalWithdraw.mutate(input).catch((error: unknown) => {
        logger.debug({ err: error, server: request.name }, 'withdrawing an MCP start approval failed');
      });
    };
    signal.addEventListener('abort', onAbort, { once: true });
    // Said once, and only when a person is really asked (a rule answers at once).
    const explain = setTimeout(() => {
      logger.warn(
        { server: request.name, subject: request.subject },
        `MCP server "${request.name}" is new or changed in .mcp.json and waits for approval before it starts: ` +
          `${request.subject}. Approve it in \`molf chat\`, or run \`molf mcp trust\` in ${options.workdir}.`,
      );
    }, EXPLAIN_AFTER_MS);
    explain.unref();
    try {
      await waitAny({ promise: options.registered, signal });
      while (!signal.aborted) {
        const seen = options.registrations();
        let answer: McpServerApprovalAnswer | undefined;
        try {
          answer = await client.rpc.worker.mcpServerApproval.mutate(input, { signal });
        } catch (error) {
          if (signal.aborted) break;
          logger.debug({ err: error, server: request.name }, 'asking to start an MCP server failed; asking again');
        }
        if (answer?.type === 'allow') return { type: 'allow' };
        if (answer?.type === 'deny') return { type: 'deny', reason: answer.message };
        // Nobody decided (the link dropped, the worker was offline): ask again once registered again.
        if (options.registrations() === seen) {
          await waitAny({ promise: options.nextRegistration(), delayMs: RETRY_MS, signal });
        }
      }
      return withdrawn;
    } finally {
      clearTimeout(explain);
      signal.removeEventListener('abort', onAbort);
    }
  };
}

import type { Logger } from '@molf/logging';
import type { ToolCallId, ToolDefinition, ToolResult, WorkerId } from '@molf/protocol';
import type { z } from 'zod';

/** What a server-side tool knows about the call it runs. */
export type ServerToolContext = {
  sessionId: string;
  /** The session's worker. */
  workerId: WorkerId;
  toolCallId: ToolCallId;
  /** Aborted when the turn is aborted or the call times out. */
  signal: AbortSignal;
  logger: Logger;
};

/**
 * A tool the server runs itself (skill, task, cron): offered to the model beside the worker's
 * tools, gated like them, but run on the server instead of being dispatched to the worker.
 */
export type ServerTool<Args extends z.ZodType = z.ZodType> = {
  definition: ToolDefinition<Args>;
  /** Runs one approved call with validated arguments. A failure is a result the model reads. */
  run(args: z.infer<Args>, context: ServerToolContext): Promise<ToolResult>;
};

import type { Logger } from '@molf/logging';
import type {
  ToolCallId,
  ToolDefinition,
  ToolDescriptor,
  ToolResult,
  WorkerId,
  WorkerRegistration,
} from '@molf/protocol';
import type { z } from 'zod';
import type { AgentProfile } from '../agent/agent-profiles.ts';
import type { UnattendedAsk } from '../approvals/approval-gate.ts';

/** What a server-side tool knows about the call it runs. */
export type ServerToolContext = {
  sessionId: string;
  /** The session's worker. */
  workerId: WorkerId;
  toolCallId: ToolCallId;
  /**
   * The call's id in the session's messages and events (the model's), where it differs from the
   * server's own `toolCallId`: what clients match a call by.
   */
  sessionToolCallId?: string | undefined;
  /** The model of the turn that made the call, when a turn made it. */
  modelId?: string | undefined;
  /** Aborted when the turn is aborted or the call times out. */
  signal: AbortSignal;
  /** Set in a cron job's run: what an ask does when nobody answers (a subagent's turn keeps it). */
  unattended?: UnattendedAsk | undefined;
  logger: Logger;
};

/** Where a tool would be offered: a session on this worker, run by a subagent or not. */
export type ToolOfferContext = {
  workerId: WorkerId;
  registration: WorkerRegistration;
  /** Set when the session is a subagent's. */
  agent?: AgentProfile | undefined;
};

/**
 * A tool the server runs itself (skill, task, cron): offered to the model beside the worker's
 * tools, gated like them, but run on the server instead of being dispatched to the worker.
 */
export type ServerTool<Args extends z.ZodType = z.ZodType> = {
  definition: ToolDefinition<Args>;
  /**
   * The tool keeps its own time limit, and the call's timeout (`defaultTimeoutMs`) is not applied: the
   * task tool's limit starts when its subagent starts, not while it waits for a free slot. Default false.
   */
  ownsTimeLimit?: boolean;
  /**
   * What the model is offered in this place (a description listing what the worker has, say), or
   * undefined where the tool is not offered. Default: the definition as it is, everywhere.
   */
  offer?(context: ToolOfferContext): ToolDescriptor | undefined;
  /** Runs one approved call with validated arguments. A failure is a result the model reads. */
  run(args: z.infer<Args>, context: ServerToolContext): Promise<ToolResult>;
};

import { randomUUID } from 'node:crypto';
import type { Logger } from '@molf/logging';
import { type ToolCallId, type ToolResult, toErrorResult, type WorkerId } from '@molf/protocol';
import type { JobDispatcher } from '../workers/job-dispatcher.ts';
import type { ApprovalGate, GateOutcome, GateRequest } from './approval-gate.ts';

export type GatedToolCall = {
  sessionId: string;
  workerId: WorkerId;
  tool: string;
  args: Record<string, unknown>;
  /** Defaults to a random id. */
  toolCallId?: string;
  /** The call's own timeout (see the dispatcher); the wait for approval does not count. */
  timeoutMs?: number;
  /** Aborting cancels a pending approval or the running call. */
  signal?: AbortSignal;
  agent?: GateRequest['agent'];
};

export type ToolCallRunner = {
  /** The one way a tool call reaches a worker: through the gate, then dispatch. Never throws. */
  run(call: GatedToolCall): Promise<ToolResult>;
};

export function createToolCallRunner(options: {
  gate: ApprovalGate;
  dispatcher: JobDispatcher;
  logger: Logger;
}): ToolCallRunner {
  return {
    async run(call) {
      const toolCallId = call.toolCallId ?? randomUUID();
      const outcome = await options.gate
        .check({
          sessionId: call.sessionId,
          workerId: call.workerId,
          toolCallId,
          tool: call.tool,
          args: call.args,
          ...(call.agent === undefined ? {} : { agent: call.agent }),
          ...(call.signal === undefined ? {} : { signal: call.signal }),
        })
        .catch((error: unknown): GateOutcome => {
          // A failure inside the gate must never let the call through, nor kill the turn.
          options.logger.error({ err: error, tool: call.tool, toolCallId }, 'the approval gate failed');
          return {
            type: 'deny',
            message: `The call was not run: the approval gate failed (${(error as Error).message}).`,
            errorKind: 'permission_denied',
          };
        });
      if (outcome.type === 'deny') return toErrorResult(outcome.errorKind, outcome.message);
      return options.dispatcher.dispatch({
        workerId: call.workerId,
        toolName: call.tool,
        args: call.args,
        toolCallId: toolCallId as ToolCallId,
        sessionId: call.sessionId,
        ...(outcome.readRules === undefined ? {} : { readRules: outcome.readRules }),
        ...(outcome.approvedPaths === undefined ? {} : { approvedPaths: outcome.approvedPaths }),
        ...(call.timeoutMs === undefined ? {} : { timeoutMs: call.timeoutMs }),
        ...(call.signal === undefined ? {} : { signal: call.signal }),
      });
    },
  };
}

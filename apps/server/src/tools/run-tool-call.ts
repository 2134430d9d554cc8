import { randomUUID } from 'node:crypto';
import type { Logger } from '@molf/logging';
import {
  type ToolCallId,
  type ToolResult,
  toErrorResult,
  toInvalidArgumentsResult,
  type WorkerId,
} from '@molf/protocol';
import type { ApprovalGate, GateOutcome, GateRequest } from '../approvals/approval-gate.ts';
import type { AuditLog } from '../approvals/audit-log.ts';
import type { JobDispatcher } from '../workers/job-dispatcher.ts';
import type { ServerTool } from './server-tool.ts';
import type { ToolCatalog } from './tool-catalog.ts';

export type GatedToolCall = {
  sessionId: string;
  workerId: WorkerId;
  tool: string;
  args: Record<string, unknown>;
  /** Defaults to a random id. */
  toolCallId?: string;
  /** The call's id in the session's messages and events, when it is not `toolCallId`. */
  sessionToolCallId?: string | undefined;
  /** The model step that made the call (its assistant message's id): a takeover finds the call by it. */
  stepId?: string | undefined;
  /** The call's own timeout (see the dispatcher); the wait for approval does not count. */
  timeoutMs?: number;
  /** Aborting cancels a pending approval or the running call. */
  signal?: AbortSignal;
  /** Set when a subagent makes the call (see the gate). */
  agent?: GateRequest['agent'];
  /** The model of the turn that made the call, for server tools that run one. */
  modelId?: string | undefined;
  /** Set when a cron job's run makes the call: what an ask does there (see the gate). */
  unattended?: GateRequest['unattended'];
};

export type ToolCallRunner = {
  /**
   * The one way a tool call runs: through the gate, then to the worker or to the server tool of
   * that name. Never throws: every failure is a result.
   */
  run(call: GatedToolCall): Promise<ToolResult>;
  /**
   * The outcome of a call a cut-off run of the turn sent to a worker (see the dispatcher's
   * `reattach`), waited for if it still runs; undefined when it never reached a worker. Never
   * throws: an outcome that cannot be read comes back as a result that says so.
   */
  reattach(call: {
    sessionId: string;
    step: { stepId: string; sessionToolCallId: string };
    signal?: AbortSignal;
  }): Promise<ToolResult | undefined>;
};

export function createToolCallRunner(options: {
  gate: ApprovalGate;
  dispatcher: JobDispatcher;
  catalog: ToolCatalog;
  /** Where what a worker's sandbox refused is recorded next to the gate's decisions. Default: nowhere. */
  audit?: AuditLog;
  logger: Logger;
}): ToolCallRunner {
  async function runOnWorker(call: GatedToolCall, toolCallId: string, outcome: GateOutcome & { type: 'allow' }) {
    const result = await options.dispatcher.dispatch({
      workerId: call.workerId,
      toolName: call.tool,
      args: call.args,
      toolCallId: toolCallId as ToolCallId,
      sessionId: call.sessionId,
      ...(call.sessionToolCallId === undefined || call.stepId === undefined
        ? {}
        : { step: { stepId: call.stepId, sessionToolCallId: call.sessionToolCallId } }),
      ...(outcome.readRules === undefined ? {} : { readRules: outcome.readRules }),
      ...(outcome.approvedPaths === undefined ? {} : { approvedPaths: outcome.approvedPaths }),
      ...(call.timeoutMs === undefined ? {} : { timeoutMs: call.timeoutMs }),
      ...(call.signal === undefined ? {} : { signal: call.signal }),
    });
    if (result.meta?.errorKind === 'sandbox_refused') {
      // The gate let the command through and the sandbox stopped what it tried: both belong in
      // the record of what the model was allowed to do.
      const refusal = typeof result.meta.sandboxRefusal === 'string' ? result.meta.sandboxRefusal : 'refused';
      options.audit?.append({
        workerId: call.workerId,
        sessionId: call.sessionId,
        toolCallId,
        tool: call.tool,
        subjects: [typeof call.args.command === 'string' ? call.args.command : call.tool],
        decision: 'sandbox_refused',
        by: `sandbox: ${refusal}`,
      });
    }
    return result;
  }

  async function check(
    call: GatedToolCall,
    request: { toolCallId: string; paths?: GateRequest['paths'] },
  ): Promise<{ toolCallId: string; outcome: GateOutcome }> {
    const { toolCallId } = request;
    const outcome = await options.gate
      .check({
        sessionId: call.sessionId,
        workerId: call.workerId,
        toolCallId,
        ...(call.sessionToolCallId === undefined ? {} : { sessionToolCallId: call.sessionToolCallId }),
        tool: call.tool,
        args: call.args,
        ...(request.paths === undefined ? {} : { paths: request.paths }),
        ...(call.agent === undefined ? {} : { agent: call.agent }),
        ...(call.unattended === undefined ? {} : { unattended: call.unattended }),
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
    return { toolCallId, outcome };
  }

  async function runOnServer(call: GatedToolCall, toolCallId: string, tool: ServerTool): Promise<ToolResult> {
    const parsed = tool.definition.args.safeParse(call.args);
    if (!parsed.success) {
      return toInvalidArgumentsResult(call.tool, parsed.error);
    }
    const timeoutMs =
      call.timeoutMs ?? tool.definition.timeoutFromArgs?.(parsed.data) ?? tool.definition.defaultTimeoutMs;
    // A timer cleared when the call ends: AbortSignal.timeout() would keep each call's state until its deadline.
    const timeout = new AbortController();
    const timer = tool.ownsTimeLimit === true ? undefined : setTimeout(() => timeout.abort(), timeoutMs);
    const signal = call.signal === undefined ? timeout.signal : AbortSignal.any([call.signal, timeout.signal]);
    try {
      return await tool.run(parsed.data, {
        sessionId: call.sessionId,
        workerId: call.workerId,
        toolCallId: toolCallId as ToolCallId,
        sessionToolCallId: call.sessionToolCallId,
        modelId: call.modelId,
        ...(call.unattended === undefined ? {} : { unattended: call.unattended }),
        signal,
        logger: options.logger,
      });
    } catch (error) {
      if (call.signal?.aborted === true) return toErrorResult('cancelled', 'The tool call was cancelled.');
      if (timeout.signal.aborted) {
        return toErrorResult(
          'timeout',
          `The tool "${call.tool}" did not finish within ${Math.round(timeoutMs / 1000)} s and was stopped.`,
        );
      }
      options.logger.error({ err: error, tool: call.tool, toolCallId }, 'server tool threw');
      return toErrorResult('internal', `${call.tool} failed unexpectedly: ${(error as Error).message}`);
    } finally {
      clearTimeout(timer);
    }
  }

  return {
    async run(call) {
      const { toolCallId, outcome } = await check(call, { toolCallId: call.toolCallId ?? randomUUID() });
      if (outcome.type === 'deny') return toErrorResult(outcome.errorKind, outcome.message);
      const serverTool = options.catalog.serverTool(call.tool);
      if (serverTool !== undefined) return await runOnServer(call, toolCallId, serverTool);
      const result = await runOnWorker(call, toolCallId, outcome);
      if (outcome.predicted !== true || result.meta?.pathMoved !== true) return result;
      // A path leads elsewhere than written (a link): judged again on where it really leads, and
      // run under a new id (the worker may still hold the first one's result).
      const checked = await check(call, { toolCallId: randomUUID(), paths: 'worker' });
      if (checked.outcome.type === 'deny') return toErrorResult(checked.outcome.errorKind, checked.outcome.message);
      return await runOnWorker(call, checked.toolCallId, checked.outcome);
    },

    async reattach(call) {
      try {
        return await options.dispatcher.reattach(call);
      } catch (error) {
        options.logger.warn({ err: error, sessionId: call.sessionId }, 'cannot find a call asked before a takeover');
        return toErrorResult(
          'internal',
          `The outcome of this call cannot be read (${(error as Error).message}); it may or may not have run.`,
        );
      }
    },
  };
}

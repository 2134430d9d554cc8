import { randomUUID } from 'node:crypto';
import { MCP_SERVER_TOOL, toMcpServerSubject } from '@molf/permissions';
import type { McpServerApprovalAnswer, McpServerApprovalInput, WorkerId } from '@molf/protocol';
import type { ApprovalGate } from './approval-gate.ts';

/**
 * The session id of approvals that belong to a worker rather than to a session (starting its MCP
 * servers). A "session" answer to one of them lasts until the server restarts.
 */
export function toWorkerSessionId(workerId: WorkerId): string {
  return `worker:${workerId}`;
}

/**
 * Whether a worker may start a server of its `.mcp.json`: the gate judges `mcp.server` with the
 * server's name and definition as written, and asks a person when no rule decides. A worker asking
 * again about the same definition (after a dropped link) joins the question already waiting.
 */
export async function requestMcpServerStart(
  gate: ApprovalGate,
  input: McpServerApprovalInput,
): Promise<McpServerApprovalAnswer> {
  const outcome = await gate.check({
    sessionId: toWorkerSessionId(input.workerId),
    workerId: input.workerId,
    toolCallId: randomUUID(),
    tool: MCP_SERVER_TOOL,
    args: { name: input.name, definition: input.definition },
    kind: 'mcp_server',
    shareKey: toMcpServerSubject(input),
  });
  switch (outcome.type) {
    case 'allow':
      return { type: 'allow' };
    case 'deny':
      // Only a rule or a person refuses; offline and cancelled mean nobody decided yet.
      return outcome.errorKind === 'permission_denied'
        ? { type: 'deny', message: outcome.message }
        : { type: 'retry', message: outcome.message };
  }
}

/** Cancels the question about a definition the worker no longer wants to start. */
export function withdrawMcpServerStart(gate: ApprovalGate, input: McpServerApprovalInput): { withdrawn: boolean } {
  return gate.withdraw({
    workerId: input.workerId,
    shareKey: toMcpServerSubject(input),
    reason: 'the worker no longer wants to start it (.mcp.json changed)',
  });
}

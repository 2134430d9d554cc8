import type { Approval } from '@molf/protocol';

/** Where an approval waits, as a notification names it. */
export type ApprovalPlace = {
  worker: { workerId: string; name: string | undefined };
  /** Undefined for an approval of no stored session (a worker's MCP server start). */
  session: { sessionId: string; name: string } | undefined;
};

/** What asks, in a few words: `shell_exec`, or `start MCP server "github"`. */
export function toApprovalWhat(approval: Approval): string {
  const name = approval.args.name;
  if (approval.kind === 'mcp_server' && typeof name === 'string') return `start MCP server "${name}"`;
  return approval.subagent === undefined ? approval.tool : `${approval.tool} (${approval.subagent.agent} agent)`;
}

/** The subject exactly as judged: a shell call's whole line, else each subject (canonical paths with `→`). */
export function toSubjectText(approval: Approval): string {
  const { command } = approval.args;
  if (approval.tool === 'shell_exec' && typeof command === 'string') return `$ ${command}`;
  const labels = approval.subjects.map((subject) => subject.label);
  return labels.length === 0 ? approval.tool : labels.join('\n');
}

/** One line per subject that asks, with the rule that asked; and why the call asks. */
export function toAskReasons(approval: Approval): string[] {
  const asking = approval.subjects.filter((subject) => subject.decision === 'ask');
  const lines = asking.length > 1 || approval.tool === 'shell_exec' ? asking.map(toAskLine) : [];
  return [...lines, `why: ${approval.reason}`];
}

function toAskLine(subject: Approval['subjects'][number]): string {
  return `asks: ${subject.label}${subject.rule === undefined ? ' (no rule matches)' : ` (${subject.rule})`}`;
}

/** `worker my-project · session "fix tests" (id)`. */
export function toPlaceText(place: ApprovalPlace): string {
  const worker = `worker ${place.worker.name ?? place.worker.workerId}`;
  if (place.session === undefined) return worker;
  return `${worker} · session "${place.session.name}" (${place.session.sessionId})`;
}

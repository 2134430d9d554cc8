import { isAbsolute } from 'node:path';
import type { PermissionRule, ToolCallEvaluation } from '@molf/permissions';
import { type Approval, type ApprovalKind, isFileChangeTool, MolfError } from '@molf/protocol';

/*
 * "Accept edits for this session" (approve scope `edits`): the session's later edit_file and
 * write_file calls stop asking where the only reason to ask is a blanket rule (`"*": "ask"`, or no
 * rule at all), for files inside the workdir. What it never lifts: a deny; an ask of a rule that
 * names the file (`package.json`, `.mcp.json`: files whose content other programs run); an ask of
 * a subagent's own rules; a path outside the workdir or one the worker could not resolve.
 */

/** Whether an approval offers the `edits` scope: a session's edit_file or write_file call. */
export function offersAcceptEdits(request: { kind?: ApprovalKind | undefined; tool: string }): boolean {
  return (request.kind ?? 'tool_call') === 'tool_call' && isFileChangeTool(request.tool);
}

/** Refuses (`invalid_input`, the approval keeps waiting) an `edits` answer to an approval that does not offer it. */
export function checkAcceptEditsScope(approval: Pick<Approval, 'tool' | 'offersAcceptEdits'>): void {
  if (approval.offersAcceptEdits === true) return;
  throw new MolfError(
    'invalid_input',
    `"edits" (accept edits for this session) answers only an edit_file or write_file call; this is a ${approval.tool} call: approve it once or for the session instead`,
    { field: 'scope' },
  );
}

/** A pattern that matches every path: a rule with it has no opinion on a particular file. */
function isBlanket(rule: PermissionRule): boolean {
  return rule.pattern === '*' || rule.pattern === '**';
}

/** A path form relative to the workdir and not leading out of it (the worker gives outside paths absolute). */
function isInsideWorkdir(form: string | undefined): boolean {
  return form !== undefined && !isAbsolute(form) && form !== '..' && !form.startsWith('../');
}

/**
 * The evaluation of an edit_file or write_file call in a session that accepted edits: an ask that
 * only a blanket rule of the worker's file (or no rule) makes, for a path inside the workdir,
 * becomes an allow by `rule` (the session's answer). Any other evaluation is returned as it is.
 */
export function acceptEdit(
  evaluation: ToolCallEvaluation,
  options: { tool: string; rule: PermissionRule },
): ToolCallEvaluation {
  if (!isFileChangeTool(options.tool) || evaluation.decision.type !== 'ask' || evaluation.problems.length > 0) {
    return evaluation;
  }
  const asking = evaluation.verdicts.filter((verdict) => verdict.decision.type !== 'allow');
  const liftable = asking.every(({ subject, decision }) => {
    if (decision.type !== 'ask' || subject.kind !== 'path' || !isInsideWorkdir(subject.forms[0])) return false;
    const { rule } = decision;
    if (rule === undefined) return decision.reason === 'no rule matches';
    return (
      (rule.source.layer === 'file' || rule.source.layer === 'builtin') && rule.action === 'ask' && isBlanket(rule)
    );
  });
  if (asking.length === 0 || !liftable) return evaluation;
  const allow = { type: 'allow' as const, rule: options.rule };
  const { alwaysNote: _note, ...rest } = evaluation;
  return {
    ...rest,
    decision: allow,
    verdicts: evaluation.verdicts.map((verdict) =>
      verdict.decision.type === 'ask' ? { ...verdict, decision: allow } : verdict,
    ),
  };
}

/** The rule an accepted edit is allowed by, as the audit log names it (a session answer). */
export function acceptEditsRule(tool: string): PermissionRule {
  return { tool, pattern: '*', action: 'allow', source: { layer: 'session' } };
}

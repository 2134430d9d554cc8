import type { Approval, ApprovalScope } from '@molf/protocol';
import type { TerminalStyle } from '../terminal/terminal-style.ts';
import { formatDiff } from './format-diff.ts';

/** One answer to an approval, by the key that gives it. */
export type ApprovalChoice =
  | { key: 'y' | 's' | 'a' | 'e'; label: string; scope: ApprovalScope }
  | { key: 'n'; label: string; scope: 'deny' };

/** The start of an MCP server of the worker's .mcp.json, rather than a tool call of a session. */
export function isServerStart(approval: Approval): boolean {
  return approval.kind === 'mcp_server';
}

/**
 * The answers an approval offers, in the order shown; Enter gives the first. "session" and
 * "always" only when a pattern describes the call safely, "edits" only for an edit the server
 * offers it for; a server start belongs to no session.
 */
export function approvalChoices(approval: Approval): ApprovalChoice[] {
  if (isServerStart(approval)) {
    return [
      { key: 'y', label: 'yes, start it for this worker process', scope: 'once' },
      { key: 'a', label: 'always start this exact definition', scope: 'always' },
      { key: 'n', label: 'no', scope: 'deny' },
    ];
  }
  const choices: ApprovalChoice[] = [{ key: 'y', label: 'yes, once', scope: 'once' }];
  if (approval.offersAcceptEdits === true) {
    choices.push({ key: 'e', label: 'accept edits for this session', scope: 'edits' });
  }
  if (approval.alwaysPatterns !== null) {
    choices.push({ key: 's', label: 'this session', scope: 'session' });
    choices.push({ key: 'a', label: 'always', scope: 'always' });
  }
  choices.push({ key: 'n', label: 'no (tell the model why)', scope: 'deny' });
  return choices;
}

/** The choice a typed answer names: its key, or (for pipes and old habits) a word or o/d. */
export function choiceFor(approval: Approval, answer: string): ApprovalChoice | undefined {
  const word = answer.trim().toLowerCase();
  const key =
    word === '' || word === 'o' || word === 'once' || word === 'yes'
      ? 'y'
      : word === 'd' || word === 'deny' || word === 'no'
        ? 'n'
        : word === 'session'
          ? 's'
          : word === 'always'
            ? 'a'
            : word === 'edits'
              ? 'e'
              : word;
  return approvalChoices(approval).find((choice) => choice.key === key);
}

/** The line of keys: `[y]es once · [s] this session · … (Enter: yes)`. */
export function formatChoices(approval: Approval, style: TerminalStyle): string {
  const keys = approvalChoices(approval).map((choice) => `${style.bold(`[${choice.key}]`)} ${choice.label}`);
  return `${keys.join(style.dim(' · '))} ${style.dim('(Enter: yes)')}`;
}

/**
 * An approval's question as printed above the keys: what asks (the exact shell line, the canonical
 * path), which rule asked, the change an edit makes as a diff, and what "session"/"always" would save.
 */
export function describeApproval(approval: Approval, style: TerminalStyle): string {
  if (isServerStart(approval)) {
    return [
      style.warn(`? MCP server ${String(approval.args.name)} asks to start: ${approval.subjects[0]?.label ?? ''}`),
      style.dim(`  (new or changed in .mcp.json; ${approval.reason})`),
    ].join('\n');
  }
  const subjects = approval.subjects.filter((subject) => subject.decision !== 'allow').map((subject) => subject.label);
  const who = approval.subagent === undefined ? '' : `[${approval.subagent.agent}] `;
  const lines = [
    style.warn(`? ${who}${approval.tool} asks for approval: ${subjects.join('; ') || approval.tool}`),
    style.dim(`  (${approval.reason})`),
  ];
  if (approval.preview !== undefined) {
    const diff = formatDiff(approval.preview, style, { maxLines: 80 });
    if (diff !== '') lines.push(...diff.split('\n').map((line) => `  ${line}`));
  }
  const patterns = approval.alwaysPatterns;
  if (patterns === null) {
    lines.push(style.dim('  (no "session"/"always": no pattern describes this call safely)'));
  } else {
    lines.push(`  session/always allow: ${patterns.map((pattern) => JSON.stringify(pattern)).join(', ')}`);
  }
  if (approval.alwaysNote !== undefined) lines.push(style.warn(`  ${approval.alwaysNote}`));
  return lines.join('\n');
}

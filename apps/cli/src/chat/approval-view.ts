import type { Approval, ApprovalScope } from '@molf/protocol';
import type { TerminalStyle } from '../terminal/terminal-style.ts';
import { formatDiff } from './format-diff.ts';

/** One answer to an approval, by the key that gives it. */
export type ApprovalChoice =
  | { key: 'y' | 's' | 'a' | 'e'; label: string; scope: ApprovalScope }
  | { key: 'n'; label: string; scope: 'deny' };

/** What the person at this chat may answer. */
export type AnswerRights = {
  /**
   * Whether "always" is offered: it saves a rule in the worker's file, which only an admin
   * credential may do (an operator answers once, for the session, or accepts edits). Default true.
   */
  always?: boolean;
};

/** The start of an MCP server of the worker's .mcp.json, rather than a tool call of a session. */
export function isServerStart(approval: Approval): boolean {
  return approval.kind === 'mcp_server';
}

/**
 * The answers an approval offers, in the order shown; Enter gives the first. "session" and
 * "always" only when a pattern describes the call safely, "edits" only for an edit the server
 * offers it for, "always" only to an admin; a server start belongs to no session.
 */
export function approvalChoices(approval: Approval, rights: AnswerRights = {}): ApprovalChoice[] {
  const always = rights.always !== false;
  if (isServerStart(approval)) {
    return [
      { key: 'y', label: 'yes, start it for this worker process', scope: 'once' },
      ...(always ? [{ key: 'a', label: 'always start this exact definition', scope: 'always' } as const] : []),
      { key: 'n', label: 'no', scope: 'deny' },
    ];
  }
  const choices: ApprovalChoice[] = [{ key: 'y', label: 'yes, once', scope: 'once' }];
  if (approval.offersAcceptEdits === true) {
    choices.push({ key: 'e', label: 'accept edits for this session', scope: 'edits' });
  }
  if (approval.alwaysPatterns !== null) {
    choices.push({ key: 's', label: 'this session', scope: 'session' });
    if (always) choices.push({ key: 'a', label: 'always', scope: 'always' });
  }
  choices.push({ key: 'n', label: 'no (tell the model why)', scope: 'deny' });
  return choices;
}

/** The choice a typed answer names: its key, or (for pipes and old habits) a word or o/d. */
export function choiceFor(approval: Approval, answer: string, rights: AnswerRights = {}): ApprovalChoice | undefined {
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
  return approvalChoices(approval, rights).find((choice) => choice.key === key);
}

/** The line of keys: `[y]es once · [s] this session · … (Enter: yes)`. */
export function formatChoices(approval: Approval, style: TerminalStyle, rights: AnswerRights = {}): string {
  const keys = approvalChoices(approval, rights).map((choice) => `${style.bold(`[${choice.key}]`)} ${choice.label}`);
  return `${keys.join(style.dim(' · '))} ${style.dim('(Enter: yes)')}`;
}

/** Why "always" is not offered to this credential. */
const ALWAYS_NEEDS_ADMIN = '  ("always" saves a rule for the worker: that needs an admin credential)';

/**
 * An approval's question as printed above the keys: what asks (the exact shell line, the canonical
 * path), which rule asked, the change an edit makes as a diff, and what "session"/"always" would
 * save (or that "always" needs an admin).
 */
export function describeApproval(approval: Approval, style: TerminalStyle, rights: AnswerRights = {}): string {
  const always = rights.always !== false;
  if (isServerStart(approval)) {
    return [
      style.warn(`? MCP server ${String(approval.args.name)} asks to start: ${approval.subjects[0]?.label ?? ''}`),
      style.dim(`  (new or changed in .mcp.json; ${approval.reason})`),
      ...(always ? [] : [style.dim(ALWAYS_NEEDS_ADMIN)]),
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
    const shown = patterns.map((pattern) => JSON.stringify(pattern)).join(', ');
    lines.push(`  ${always ? 'session/always' : 'session'} allow: ${shown}`);
    if (!always) lines.push(style.dim(ALWAYS_NEEDS_ADMIN));
  }
  if (approval.alwaysNote !== undefined) lines.push(style.warn(`  ${approval.alwaysNote}`));
  return lines.join('\n');
}

import type { ShellAnalysis } from './shell/analyze-shell-line.ts';
import type { DestructiveCommand } from './shell/destructive-commands.ts';

/** One thing a tool call's rules are matched against: a path, a simple command, a name. */
export type PermissionSubject = {
  kind: 'path' | 'pattern' | 'command' | 'name' | 'tool';
  /** What people see. */
  label: string;
  /**
   * The strings patterns are matched against. The first is authoritative; a deny on any of the
   * others also denies (a rule on `*.env` must catch `./sub/../.env` and a link to `.env`).
   */
  forms: string[];
  /** The pattern an "always" answer saves for this subject, or null when none is safe. */
  alwaysPattern: string | null;
  /**
   * Set for a shell command that destroys what it touches (`rm`, `git push --force`…): its
   * `alwaysPattern` is only its exact line (or null), and the approval says why.
   */
  destructive?: DestructiveCommand | undefined;
  /** Set when the subject cannot be judged by rules: it is at most `ask`. */
  problem?: string;
  /**
   * The tool whose rules judge this subject, when not the call's own: a file a shell line reads is
   * judged by the `read_file` rules, one it writes by the `write_file` rules.
   */
  ruleTool?: string;
  /**
   * Set for a file a shell line reads or writes: only rules that name `ruleTool` (not the `"*"`
   * catch-all) judge it, and none matching means no restriction. The line's own shell rules still
   * decide; file rules only add denies and asks.
   */
  restrictOnly?: true;
  /**
   * Commands this subject may run without Molf knowing (an unknown program's arguments): when the
   * subject asks, a deny of any of them denies it.
   */
  denyProbes?: () => PermissionSubject[];
  /**
   * Set when only a deny of this subject counts: a wrapper that changes nothing about what runs
   * (`timeout 5 npm test` is judged by `npm test`), what a runner with rules of its own starts
   * (`npx vitest`), or a stretch of a line the parser could not read.
   */
  onlyDeny?: true;
  /**
   * Set for a path a command names without Molf knowing what it does with it: only a deny counts,
   * and it asks (the command may open the file, or may not).
   */
  mention?: true;
};

export type ToolCallSubjects = {
  subjects: PermissionSubject[];
  /** Reasons the call cannot be fully judged (shell lines only); they make it at most `ask`. */
  problems: string[];
  /** The shell analysis, for `explain`. */
  shell?: ShellAnalysis;
};

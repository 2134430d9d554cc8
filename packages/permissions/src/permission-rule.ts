import { setFlagsFromString } from 'node:v8';
import picomatch from 'picomatch';

/*
 * Patterns become backtracking regular expressions, and both sides can be hostile: a subagent's file
 * (which a model may write) sets patterns, and a model sets the paths they are matched against. A
 * pattern with several wildcards against a long path (`*a*a*a*…b` against 4,000 `a`s) would block the
 * server for hours. V8 switches such a match to its linear-time engine after too many backtracks, so
 * such a match ends in tens of milliseconds (`evaluate-tool-call.test.ts` has a 4,000-character case).
 */
setFlagsFromString('--enable-experimental-regexp-engine-on-excessive-backtracks');

export const PERMISSION_ACTIONS = ['allow', 'deny', 'ask'] as const;
export type PermissionAction = (typeof PERMISSION_ACTIONS)[number];

export function isPermissionAction(value: unknown): value is PermissionAction {
  return typeof value === 'string' && (PERMISSION_ACTIONS as readonly string[]).includes(value);
}

/** Where a rule came from, for `explain`, refusals and the audit log. */
export type RuleSource =
  | { layer: 'file'; line: number; column: number }
  | { layer: 'agent'; agent: string }
  | { layer: 'session' }
  | { layer: 'builtin' };

export type PermissionRule = {
  /** Tool name or glob over tool names (`*` is every tool). */
  tool: string;
  /** The pattern as written. */
  pattern: string;
  action: PermissionAction;
  source: RuleSource;
  /**
   * The id of the grant this rule is (`g_…`): a rule an "always" answer saved, which
   * `permissions.grants` lists and `permissions.revoke` takes back. Absent for other rules.
   */
  grant?: string;
  /** When the rule stops applying, in ms since the epoch (`expires` in the file). Absent: never. */
  expiresAt?: number;
};

/** What a grant id may be in the file: the server makes `g_` and 16 hex digits; a person may write others. */
export const GRANT_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/** Whether a rule applies at `now` (ms since the epoch): it has no expiry, or its expiry is later. */
export function isInForce(rule: PermissionRule, now: number): boolean {
  return rule.expiresAt === undefined || now < rule.expiresAt;
}

const MATCH_OPTIONS = { dot: true, bash: true } as const;
const compiled = new Map<string, (subject: string) => boolean>();
const MAX_COMPILED = 20_000;
/** picomatch's lookaheads that keep wildcards off `.` and `..` segments (`NO_DOTS`, `NO_DOT_SLASH`…). */
const DOT_SEGMENT_GUARDS = /\(\?!(?:\(\?:\^\|\\\/\))?\\\.\{[01],2\}\(\?:\\\/\|\$\)\)/g;

/** Expands `~`, `$HOME` and `${HOME}` where a path or word starts. */
export function expandHome(pattern: string, home: string | undefined): string {
  if (home === undefined) return pattern;
  return pattern.replace(/(^|\s)(?:~|\$HOME|\$\{HOME\})(?=\/|\s|$)/g, (_match, lead: string) => `${lead}${home}`);
}

/** A compiled glob (picomatch, `dot` and `bash`: `*` crosses `/`), cached across evaluations. */
export function compileGlob(pattern: string): (subject: string) => boolean {
  let matcher = compiled.get(pattern);
  if (matcher === undefined) {
    if (compiled.size >= MAX_COMPILED) compiled.clear();
    // The bare regular expression: picomatch's matcher function adds path-format handling we don't
    // need on every test (subjects are already normalised), at several times the cost.
    const made = picomatch.makeRe(pattern, MATCH_OPTIONS);
    // Even with `dot`, picomatch keeps wildcards off `.` and `..` path segments. Subjects are
    // strings, not directory walks: `rm *` must still match `rm -rf /tmp/../home` and `*.env` must
    // match `../.env`, or a deny rule misses while a broader allow matches.
    const regex = new RegExp(made.source.replace(DOT_SEGMENT_GUARDS, ''), made.flags);
    matcher = (subject: string) => regex.test(subject);
    compiled.set(pattern, matcher);
  }
  return matcher;
}

/** A pattern that matches exactly `text`. */
export function escapeGlob(text: string): string {
  return text.replace(/[\\*?[\]{}()!+@|]/g, (char) => `\\${char}`);
}

export function describeRule(rule: PermissionRule): string {
  const where =
    rule.source.layer === 'file'
      ? `permissions.jsonc line ${rule.source.line}`
      : rule.source.layer === 'agent'
        ? `the ${rule.source.agent} agent's permissions`
        : rule.source.layer === 'session'
          ? 'an "always" answer in this session'
          : 'the built-in rules';
  const body = rule.pattern === '*' ? `"${rule.action}"` : `{ "${rule.pattern}": "${rule.action}" }`;
  return `"${rule.tool}": ${body} (${where}${rule.grant === undefined ? '' : `, grant ${rule.grant}`})`;
}

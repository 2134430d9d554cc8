import { compileGlob, expandHome, isInForce, type PermissionAction, type PermissionRule } from './permission-rule.ts';

/**
 * A read_file rule as a tool that reads many files applies it: a pattern and its action, in order.
 * `layer: 'agent'` marks a subagent's rule: that list is read on its own and its deny is a veto.
 */
export type ReadRule = { pattern: string; action: PermissionAction; layer?: 'agent' };

function readRulesOf(rules: readonly PermissionRule[], options: { home: string | undefined; now: number }): ReadRule[] {
  return rules
    .filter(
      (rule) =>
        isInForce(rule, options.now) &&
        (rule.tool === '*' || rule.tool === 'read_file' || compileGlob(rule.tool)('read_file')),
    )
    .map((rule) => ({
      pattern: expandHome(rule.pattern, options.home),
      // A catch-all's ask is no opinion on files (as in the gate, where only rules naming read_file
      // make a file a question): it leaves a file readable; a catch-all's deny still denies.
      action: rule.action === 'ask' && rule.tool !== 'read_file' ? 'allow' : rule.action,
    }));
}

/**
 * The rules that decide what read_file may read, in order and with `~` expanded: what a tool that
 * reads many files (grep over a directory) must apply to each file, so that it cannot read what
 * read_file would refuse. Only the rules in force at `now`, and only the agent and file layers:
 * session answers never lift a deny. As in the gate, the two layers are judged apart, so an
 * agent's rules only ever narrow the file's.
 */
export function toReadRules(options: {
  rules: readonly PermissionRule[];
  /** A subagent's own rules. Default none. */
  agentRules?: readonly PermissionRule[] | undefined;
  home?: string | undefined;
  /** The time the rules are judged at (ms since the epoch): expired rules are left out. */
  now: number;
}): ReadRule[] {
  const at = { home: options.home, now: options.now };
  return [
    ...readRulesOf(options.rules, at),
    ...readRulesOf(options.agentRules ?? [], at).map((rule) => ({ ...rule, layer: 'agent' as const })),
  ];
}

type CompiledReadRule = { test: (form: string) => boolean; action: PermissionAction };

/** Whether the last rule matching any of the forms denies or asks. */
function lastMatchRefuses(rules: readonly CompiledReadRule[], forms: readonly string[]): boolean {
  if (rules.every((rule) => rule.action === 'allow')) return false;
  return forms.some((form) => {
    for (let index = rules.length - 1; index >= 0; index -= 1) {
      const rule = rules[index] as CompiledReadRule;
      if (rule.test(form)) return rule.action !== 'allow';
    }
    return false;
  });
}

/**
 * Whether a file may not be read without a person: the last of the file's rules that matches any of
 * its forms (its path relative to the workdir, its absolute path) denies or asks, or the last of an
 * agent's rules that does. A tool that reads many files at once (grep over a directory) skips such a
 * file, since nobody can be asked about each one. A refusal on any form counts, as in the gate.
 */
export function createReadDenial(rules: readonly ReadRule[]): (forms: readonly string[]) => boolean {
  const compile = (rule: ReadRule): CompiledReadRule => ({ test: compileGlob(rule.pattern), action: rule.action });
  const file = rules.filter((rule) => rule.layer !== 'agent').map(compile);
  const agent = rules.filter((rule) => rule.layer === 'agent').map(compile);
  return (forms) => lastMatchRefuses(file, forms) || lastMatchRefuses(agent, forms);
}

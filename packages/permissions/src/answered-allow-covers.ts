import type { PermissionRule } from './permission-rule.ts';
import type { DestructiveCommand } from './shell/destructive-commands.ts';

/**
 * Whether an allow rule is a person's answer to an approval rather than a rule they wrote: a
 * "session" answer, or an "always" answer the file keeps with its grant id.
 */
export function isAnsweredAllow(rule: PermissionRule): boolean {
  return rule.action === 'allow' && (rule.source.layer === 'session' || rule.grant !== undefined);
}

/** A pattern with its escapes removed is the one string it matches when it has no live wildcard. */
function isExactly(pattern: string, form: string): boolean {
  return pattern.replace(/\\(.)/g, '$1') === form;
}

/**
 * Whether a matching rule may decide a command. An answer was given for the command the person saw:
 * its pattern may be wider than that command (`git push *` saved by answering `git push origin
 * main`), but it never decides a destructive command (`git push --force`, `chmod -R`, see
 * destructive-commands.ts) unless it is that exact command, and never one whose exact line does not
 * say what it destroys (`xargs rm`). Rules a person wrote keep deciding as written.
 *
 * `pattern` is the rule's pattern with the home directory expanded; `destructive` is asked only for
 * an answer, as it costs a look through the destructive table.
 */
export function answeredAllowCovers(
  rule: PermissionRule,
  options: { pattern: string; form: string; destructive: () => DestructiveCommand | undefined },
): boolean {
  if (!isAnsweredAllow(rule)) return true;
  const found = options.destructive();
  if (found === undefined) return true;
  return (
    found.unsavable === undefined && (isExactly(rule.pattern, options.form) || isExactly(options.pattern, options.form))
  );
}

/** Why a command asks although an answer's pattern matched it: `a saved "git push *" does not cover…`. */
export function toUncoveredReason(rule: PermissionRule, options: { form: string; found: DestructiveCommand }): string {
  const { form, found } = options;
  return `a saved "${rule.pattern}" does not cover a destructive command: ${form} (${found.name} ${found.harm})`;
}

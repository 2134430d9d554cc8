import { compileGlob, expandHome, type PermissionAction, type PermissionRule } from './permission-rule.ts';

/** A read_file rule as a tool that reads many files applies it: a pattern and its action, in file order. */
export type ReadRule = { pattern: string; action: PermissionAction };

/**
 * The rules that decide what read_file may read, in order and with `~` expanded: what a tool that
 * reads many files (grep over a directory) must apply to each file, so that it cannot read what
 * read_file would refuse. Only the agent and file layers: session answers never lift a deny.
 */
export function toReadRules(options: { rules: readonly PermissionRule[]; home?: string | undefined }): ReadRule[] {
  return options.rules
    .filter((rule) => rule.tool === '*' || rule.tool === 'read_file' || compileGlob(rule.tool)('read_file'))
    .map((rule) => ({ pattern: expandHome(rule.pattern, options.home), action: rule.action }));
}

/**
 * Whether the last of `rules` that matches any of a file's forms (its path relative to the workdir,
 * its absolute path) denies it. A deny on any form counts, as in the gate.
 */
export function createReadDenial(rules: readonly ReadRule[]): (forms: readonly string[]) => boolean {
  const compiled = rules.map((rule) => ({ test: compileGlob(rule.pattern), action: rule.action }));
  const onlyAllows = compiled.every((rule) => rule.action !== 'deny');
  return (forms) => {
    if (onlyAllows) return false;
    return forms.some((form) => {
      for (let index = compiled.length - 1; index >= 0; index -= 1) {
        const rule = compiled[index] as (typeof compiled)[number];
        if (rule.test(form)) return rule.action === 'deny';
      }
      return false;
    });
  };
}

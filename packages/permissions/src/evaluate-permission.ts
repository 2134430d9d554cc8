import { answeredAllowCovers, toUncoveredReason } from './answered-allow-covers.ts';
import { compileGlob, describeRule, expandHome, isInForce, type PermissionRule } from './permission-rule.ts';
import type { PermissionSubject, ToolCallSubjects } from './permission-subjects.ts';
import { type DestructiveCommand, toAlwaysNote } from './shell/destructive-commands.ts';

/**
 * The rules in force for one call: a subagent's own rules, the worker's file, then this session's
 * "always" answers. Each of the agent and file lists is read on its own (the last match wins) and the
 * stricter answer counts: an agent's deny is a veto, its ask turns the file's allow into a question,
 * its allow never lifts what the file asks or denies. A session answer then stops a question, never a
 * deny. An answer (a session rule, or a file rule with a grant id) decides a destructive command
 * only when its pattern is that exact command (answered-allow-covers.ts).
 */
export type PermissionLayers = {
  agent?: readonly PermissionRule[];
  file: readonly PermissionRule[];
  session?: readonly PermissionRule[];
};

export type PermissionDecision =
  | { type: 'allow'; rule: PermissionRule }
  | { type: 'deny'; rule: PermissionRule; veto: boolean }
  | { type: 'ask'; rule: PermissionRule | undefined; reason: string };

export type SubjectVerdict = { subject: PermissionSubject; decision: PermissionDecision };

export type PermissionEvaluation = {
  tool: string;
  decision: PermissionDecision;
  /** The subject that decided (for deny: the first denied one; for ask: the first that asked). */
  decidedBy: PermissionSubject | undefined;
  verdicts: SubjectVerdict[];
  /** Why the call could not be fully judged. */
  problems: string[];
  /**
   * What an "always" answer would save: one allow pattern per subject that asked, or null when
   * any of them has no safe pattern (interpreters fed from stdin, run-time command names).
   */
  alwaysPatterns: string[] | null;
  /**
   * Why `alwaysPatterns` is only the exact command, or null, when a subject that asked is a
   * destructive command: one sentence for the approval. Undefined otherwise.
   */
  alwaysNote?: string;
};

type CompiledRule = { home: string | undefined; pattern: string; test: (subject: string) => boolean };
/** Each rule's pattern compiled once per home directory (rules are immutable objects). */
const compiledRules = new WeakMap<PermissionRule, CompiledRule>();

function compiledPattern(rule: PermissionRule, home: string | undefined): CompiledRule {
  let compiled = compiledRules.get(rule);
  if (compiled === undefined || compiled.home !== home) {
    const pattern = expandHome(rule.pattern, home);
    compiled = { home, pattern, test: compileGlob(pattern) };
    compiledRules.set(rule, compiled);
  }
  return compiled;
}

function matches(rule: PermissionRule, subject: PermissionSubject, form: string, home: string | undefined): boolean {
  const { pattern, test } = compiledPattern(rule, home);
  if (test(form)) return true;
  // `git push *` also covers a bare `git push`.
  return subject.kind === 'command' && pattern.endsWith(' *') && test(`${form} `);
}

/** The rules in force at `now` whose tool key matches the tool, in order. */
function rulesFor(rules: readonly PermissionRule[], tool: string, now: number): PermissionRule[] {
  return rules.filter(
    (rule) => isInForce(rule, now) && (rule.tool === '*' || rule.tool === tool || compileGlob(rule.tool)(tool)),
  );
}

type MatchOptions = {
  subject: PermissionSubject;
  form: string;
  home: string | undefined;
  /** Whether the subject is a destructive command (asked only when an answer matches it). */
  destructive: () => DestructiveCommand | undefined;
  /** Collects the answers that matched but may not decide this subject (see answered-allow-covers.ts), last first. */
  passed?: PermissionRule[];
};

/** The last rule that matches and may decide the subject; an answer that may not is passed over. */
function lastMatch(rules: readonly PermissionRule[], options: MatchOptions): PermissionRule | undefined {
  for (let index = rules.length - 1; index >= 0; index -= 1) {
    const rule = rules[index] as PermissionRule;
    if (!matches(rule, options.subject, options.form, options.home)) continue;
    const pattern = compiledPattern(rule, options.home).pattern;
    if (answeredAllowCovers(rule, { pattern, form: options.form, destructive: options.destructive })) return rule;
    options.passed?.push(rule);
  }
  return undefined;
}

function toDecision(rule: PermissionRule | undefined, veto = false): PermissionDecision {
  if (rule === undefined) return { type: 'ask', rule: undefined, reason: 'no rule matches' };
  switch (rule.action) {
    case 'allow':
      return { type: 'allow', rule };
    case 'deny':
      return { type: 'deny', rule, veto };
    case 'ask':
      return { type: 'ask', rule, reason: `the rule ${describeRule(rule)} asks` };
  }
}

function judgeSubject(
  subject: PermissionSubject,
  options: {
    agent: readonly PermissionRule[] | undefined;
    /** The file's rules, in order. */
    standing: readonly PermissionRule[];
    session: readonly PermissionRule[];
    home: string | undefined;
  },
): PermissionDecision {
  let primary: PermissionDecision | undefined;
  let found: { value: DestructiveCommand | undefined } | undefined;
  const destructive = () => {
    found ??= { value: subject.kind === 'command' ? subject.destructive : undefined };
    return found.value;
  };
  // The answers passed over on the authoritative form (the first): the one that would have decided.
  let uncovered: PermissionRule | undefined;
  for (const form of subject.forms) {
    const match = { subject, form, home: options.home, destructive };
    const agent = options.agent === undefined ? undefined : lastMatch(options.agent, match);
    if (agent?.action === 'deny') return toDecision(agent, true);
    const passed = { standing: [] as PermissionRule[], session: [] as PermissionRule[] };
    let standing = toDecision(lastMatch(options.standing, { ...match, passed: passed.standing }));
    // A session's "always" answers stop questions; they never lift a deny the file or agent sets
    // (an answered `git push *` must not override `"git push --force *": "deny"`).
    if (standing.type === 'deny') return standing;
    // The agent narrows: its ask makes the file's allow a question.
    if (agent?.action === 'ask' && standing.type === 'allow') standing = toDecision(agent);
    const session = lastMatch(options.session, { ...match, passed: passed.session });
    if (primary === undefined) {
      primary = session === undefined ? standing : toDecision(session);
      uncovered = passed.session[0] ?? passed.standing[0];
    }
  }
  const decision = primary ?? toDecision(undefined);
  if (decision.type === 'allow' && subject.problem !== undefined) {
    return { type: 'ask', rule: decision.rule, reason: subject.problem };
  }
  // An answer that would have let a destructive command go says why the command asks instead.
  const command = found?.value;
  if (
    decision.type === 'ask' &&
    uncovered !== undefined &&
    command !== undefined &&
    decision.rule?.source.layer !== 'agent'
  ) {
    const form = subject.forms[0] as string;
    return { type: 'ask', rule: decision.rule, reason: toUncoveredReason(uncovered, { form, found: command }) };
  }
  return decision;
}

/** The stand-in rule of a file that no rule of its tool restricts. */
function unrestricted(tool: string): PermissionRule {
  return { tool, pattern: '*', action: 'allow', source: { layer: 'builtin' } };
}

/**
 * Decides one tool call: any denied subject denies; else any subject that asks (or anything the
 * shell parser could not understand) asks; else allow. A rule whose `expires` is not after `now`
 * is left out. Pure: no I/O, no clock of its own.
 */
export function evaluatePermission(options: {
  tool: string;
  subjects: ToolCallSubjects;
  layers: PermissionLayers;
  home?: string | undefined;
  /** The time rules are judged at, in ms since the epoch: rules with an earlier `expires` do not apply. */
  now: number;
}): PermissionEvaluation {
  const { tool, layers } = options;
  // The rules of each tool that judges a subject: the call's own, or read_file/write_file for the
  // files a shell line reads and writes.
  const rulesByTool = new Map<string, Parameters<typeof judgeSubject>[1]>();
  const rulesOf = (subject: PermissionSubject) => {
    const ruleTool = subject.ruleTool ?? tool;
    const named = subject.restrictOnly === true;
    const key = `${named ? 'named' : 'all'}:${ruleTool}`;
    let found = rulesByTool.get(key);
    if (found === undefined) {
      const pick = (rules: readonly PermissionRule[]) =>
        rulesFor(rules, ruleTool, options.now).filter((rule) => !named || rule.tool !== '*');
      found = {
        agent: layers.agent === undefined ? undefined : pick(layers.agent),
        standing: pick(layers.file),
        session: pick(layers.session ?? []),
        home: options.home,
      };
      rulesByTool.set(key, found);
    }
    return found;
  };
  const judge = (subject: PermissionSubject): PermissionDecision => {
    const decision = judgeSubject(subject, rulesOf(subject));
    // A file no rule of its tool speaks of: the shell rules alone decide the line, unless the
    // file itself cannot be judged (then that is why it asks).
    if (subject.restrictOnly === true && decision.type === 'ask' && decision.rule === undefined) {
      return subject.problem === undefined
        ? { type: 'allow', rule: unrestricted(subject.ruleTool ?? tool) }
        : { type: 'ask', rule: undefined, reason: subject.problem };
    }
    return decision;
  };
  const { subjects, problems } = options.subjects;
  const verdicts: SubjectVerdict[] = [];
  for (const subject of subjects) {
    const decision = judge(subject);
    if (subject.mention === true) {
      if (decision.type === 'deny') {
        const reason = `${subject.label}, which the ${subject.ruleTool} rules deny`;
        verdicts.push({ subject, decision: { type: 'ask', rule: decision.rule, reason } });
      }
      continue;
    }
    if (subject.onlyDeny !== true || decision.type === 'deny') verdicts.push({ subject, decision });
    if (decision.type === 'deny' || subject.denyProbes === undefined) continue;
    // What an unknown program may run: a deny of it wins over the program's own allow or ask.
    for (const probe of subject.denyProbes()) {
      const probed = judge(probe);
      if (probed.type === 'deny') {
        verdicts.push({ subject: probe, decision: probed });
        break;
      }
    }
  }

  const denied = verdicts.find((verdict) => verdict.decision.type === 'deny');
  const asking = verdicts.filter((verdict) => verdict.decision.type === 'ask');
  const alwaysPatterns = asking.some((verdict) => verdict.subject.alwaysPattern === null)
    ? null
    : [...new Set(asking.map((verdict) => verdict.subject.alwaysPattern as string))];
  const offered = problems.length > 0 ? null : alwaysPatterns;
  const destructive = asking
    .map((verdict) => verdict.subject.destructive)
    .filter((found): found is DestructiveCommand => found !== undefined);
  const alwaysNote = toAlwaysNote(destructive, { offered: offered !== null });
  const base = {
    tool,
    verdicts,
    problems,
    alwaysPatterns: offered,
    ...(alwaysNote === undefined ? {} : { alwaysNote }),
  };

  if (denied !== undefined) {
    const { alwaysNote: _note, ...rest } = base;
    return { ...rest, alwaysPatterns: null, decision: denied.decision, decidedBy: denied.subject };
  }
  const firstAsk = asking[0];
  if (firstAsk !== undefined) {
    return { ...base, decision: firstAsk.decision, decidedBy: firstAsk.subject };
  }
  if (problems.length > 0 || verdicts.length === 0) {
    const reason = problems[0] ?? 'the call has nothing to match rules against';
    return { ...base, alwaysPatterns: null, decision: { type: 'ask', rule: undefined, reason }, decidedBy: undefined };
  }
  // An allowed call is explained by its own rules (the command), not by the read_file rule of a file it reads.
  const last =
    verdicts.findLast((verdict) => verdict.subject.ruleTool === undefined) ?? (verdicts.at(-1) as SubjectVerdict);
  return { ...base, decision: last.decision, decidedBy: last.subject };
}

import { expect } from 'vitest';
import { readDefaultPermissionsText } from './default-permissions-file.ts';
import type { PermissionLayers } from './evaluate-permission.ts';
import { safeParsePermissionsFile } from './parse-permissions-file.ts';
import { createPermissionEngine, type PermissionEngine, type ToolCallEvaluation } from './permission-engine.ts';
import type { PermissionRule } from './permission-rule.ts';

/** A user's block for shell_exec, appended after the real default file in the shell tests. */
export const USER_SHELL_RULES = {
  shell_exec: {
    '*': 'ask',
    'git status': 'allow',
    'git diff *': 'allow',
    'git log *': 'allow',
    'ls *': 'allow',
    'cat *': 'allow',
    'echo *': 'allow',
    'grep *': 'allow',
    pwd: 'allow',
    'npm test': 'allow',
    'rm *': 'deny',
    'curl *': 'deny',
    'git push *': 'deny',
  },
};

export type Decision = 'allow' | 'deny' | 'ask';
/** One case: a shell line, the decision it must get and why; `by` is the subject that must decide it. */
export type ShellCase = { command: string; decision: Decision; why: string; by?: string };

export function parseRules(text: string): PermissionRule[] {
  const parsed = safeParsePermissionsFile(text);
  if (!parsed.ok) throw new Error(`line ${parsed.error.line}: ${parsed.error.message}`);
  return parsed.rules;
}

/** The `"*"` entry of the write_file and edit_file blocks of the default file, after their comments. */
const EDIT_BLOCK_ASK = /("(?:write_file|edit_file)": \{(?:\s*\/\/[^\n]*)*\s*"\*": )"ask"/g;

/**
 * The default file as a user who lets edits go has it: write_file and edit_file start with
 * `"*": "allow"`, their other rules kept. A file a shell line writes in the workdir then asks only
 * when a rule names it, so that the shell tests judge what the line runs.
 */
export function defaultRulesAllowingEdits(): PermissionRule[] {
  const text = readDefaultPermissionsText();
  if ((text.match(EDIT_BLOCK_ASK) ?? []).length !== 2) {
    throw new Error('the default rules no longer start write_file and edit_file with "*": "ask"');
  }
  return parseRules(text.replace(EDIT_BLOCK_ASK, '$1"allow"'));
}

/** The default rules (edits allowed) followed by the user's shell block, as most shell tests judge lines. */
export function defaultAndUserRules(): PermissionRule[] {
  return [...defaultRulesAllowingEdits(), ...parseRules(JSON.stringify(USER_SHELL_RULES))];
}

/**
 * A clock for the shell analysis's time limits that moves only when the test moves it (or, with
 * `tick`, by that much each time it is read): a verdict that depends on the time left must never
 * depend on how busy the machine is.
 */
export function createFakeClock(options: { tick?: number } = {}): { now: () => number; advance(ms: number): void } {
  let time = 0;
  return {
    now: () => {
      time += options.tick ?? 0;
      return time;
    },
    advance: (ms) => {
      time += ms;
    },
  };
}

/** The time the tests judge rules at (a fixed moment: expiring rules are judged against it). */
export const TEST_NOW = Date.UTC(2026, 0, 15, 12, 0, 0);

/**
 * An engine warmed up, so the first evaluations of a test don't run in a cold WebAssembly engine.
 * Its analysis clock stands still unless `limits.now` gives another: no time limit runs out in a
 * test that does not ask for it, however loaded the machine.
 */
export async function createWarmEngine(
  options: Parameters<typeof createPermissionEngine>[0] = {},
): Promise<PermissionEngine> {
  const engine = await createPermissionEngine({
    ...options,
    limits: { now: createFakeClock().now, ...options.limits },
  });
  for (let round = 0; round < 5; round += 1) {
    engine.evaluate({
      now: TEST_NOW,
      tool: 'shell_exec',
      args: { command: 'ls -la | grep x && bash -c "echo $(pwd)"' },
      layers: { file: [] },
    });
  }
  return engine;
}

/** Evaluates one shell line. */
export function evaluateLine(
  engine: PermissionEngine,
  command: string,
  options: {
    layers: PermissionLayers;
    home?: string | undefined;
    canonicalPaths?: ((given: string) => readonly string[] | undefined) | undefined;
  },
): ToolCallEvaluation {
  return engine.evaluate({
    now: TEST_NOW,
    tool: 'shell_exec',
    args: { command },
    layers: options.layers,
    home: options.home,
    canonicalPaths: options.canonicalPaths,
  });
}

/** What a failing case prints: every subject with its decision, and the problems. */
export function explainEvaluation(evaluation: ToolCallEvaluation): string {
  const subjects = evaluation.verdicts.map((verdict) => `${verdict.subject.label} → ${verdict.decision.type}`);
  return [...subjects, ...evaluation.problems.map((problem) => `problem: ${problem}`)].join('\n');
}

/** The text in backticks, control characters escaped (`\n`), cut at 90 characters. */
export function show(text: string): string {
  const escaped = text.replace(
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it escapes
    /[\u0000-\u001f\u007f-\u00a0\u1680\u2000-\u200f\u2028-\u202f\u205f\u3000\ufeff]/g,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
  return `\`${escaped.length > 90 ? `${escaped.slice(0, 90)}…` : escaped}\``;
}

export const VERBS: Record<Decision, string> = { allow: 'allows', deny: 'denies', ask: 'asks about' };

/** `it.each` rows titled as sentences: "denies `ls | rm x`: rm at the end of a pipeline". */
export function cases(rows: readonly ShellCase[]): [string, ShellCase][] {
  return rows.map((row) => [`${VERBS[row.decision]} ${show(row.command)}: ${row.why}`, row]);
}

export function expectDecision(evaluation: ToolCallEvaluation, row: ShellCase): void {
  expect(evaluation.decision.type, explainEvaluation(evaluation)).toBe(row.decision);
  if (row.by !== undefined) expect(evaluation.decidedBy?.forms[0], explainEvaluation(evaluation)).toBe(row.by);
}

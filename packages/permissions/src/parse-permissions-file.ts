import { type Node, type ParseError, parseTree, stripComments } from 'jsonc-parser';
import { describeJsoncError } from './describe-jsonc-error.ts';
import { textPosition } from './parse-jsonc.ts';
import {
  compileGlob,
  GRANT_ID_PATTERN,
  isPermissionAction,
  PERMISSION_ACTIONS,
  type PermissionRule,
} from './permission-rule.ts';
import { safeParseRuleExpiry } from './rule-expiry.ts';

/** Where and why a permissions file was rejected; line and column count from 1. */
export type PermissionsFileProblem = { message: string; line: number; column: number; offset: number };

export type PermissionsFileResult =
  | { ok: true; rules: PermissionRule[] }
  | { ok: false; error: PermissionsFileProblem };

/** Patterns longer than this are refused (picomatch compiles them into one regular expression). */
export const MAX_PATTERN_CHARS = 4_096;

class FileProblem extends Error {
  readonly offset: number;
  constructor(message: string, offset: number) {
    super(message);
    this.offset = offset;
  }
}

const ACTION_WORDS = PERMISSION_ACTIONS.map((action) => `"${action}"`).join(', ');

function readAction(node: Node, where: string): PermissionRule['action'] {
  if (node.type !== 'string') {
    throw new FileProblem(`${where} must be one of ${ACTION_WORDS}, not ${describeNode(node)}`, node.offset);
  }
  if (!isPermissionAction(node.value)) {
    throw new FileProblem(
      `${where} is "${String(node.value)}", which is not an action: use one of ${ACTION_WORDS}`,
      node.offset,
    );
  }
  return node.value;
}

function describeNode(node: Node): string {
  if (node.type === 'null') return 'null';
  if (node.type === 'array') return 'an array';
  if (node.type === 'object') return 'an object';
  return `the ${node.type} ${JSON.stringify(node.value)}`;
}

/**
 * Whether `pattern` can stand in a permissions file as a tool name or a pattern: not empty, not
 * longer than {@link MAX_PATTERN_CHARS}, a glob picomatch compiles. The message says why not.
 */
export function safeParseRulePattern(pattern: string): { ok: true; value: string } | { ok: false; message: string } {
  if (pattern === '') return { ok: false, message: 'a pattern cannot be empty (use "*" for everything)' };
  if (pattern.length > MAX_PATTERN_CHARS) {
    return { ok: false, message: `a pattern is longer than ${MAX_PATTERN_CHARS} characters` };
  }
  try {
    compileGlob(pattern);
  } catch (error) {
    return { ok: false, message: `the pattern "${pattern}" is not a valid glob (${(error as Error).message})` };
  }
  return { ok: true, value: pattern };
}

function readPattern(keyNode: Node, where: string): string {
  const parsed = safeParseRulePattern(keyNode.value as string);
  if (!parsed.ok) throw new FileProblem(`${where}: ${parsed.message}`, keyNode.offset);
  return parsed.value;
}

const RULE_FIELDS = ['action', 'grant', 'expires'] as const;

/**
 * A pattern's value: an action word, or a rule object `{ "action": …, "grant"?: "g_…", "expires"?:
 * "2026-11-24T18:00:00Z" }` (what an "always" answer saves).
 */
function readRuleValue(node: Node, where: string): Pick<PermissionRule, 'action' | 'grant' | 'expiresAt'> {
  if (node.type !== 'object') return { action: readAction(node, where) };
  const fields = new Map<string, Node>();
  for (const property of node.children ?? []) {
    const [keyNode, valueNode] = property.children ?? [];
    if (keyNode === undefined || valueNode === undefined) continue;
    const key = keyNode.value as string;
    if (!(RULE_FIELDS as readonly string[]).includes(key)) {
      throw new FileProblem(
        `${where} has an unknown field "${key}": a rule object takes "action", and optionally "grant" and "expires"`,
        keyNode.offset,
      );
    }
    if (fields.has(key)) throw new FileProblem(`${where} gives "${key}" twice`, keyNode.offset);
    fields.set(key, valueNode);
  }
  const actionNode = fields.get('action');
  if (actionNode === undefined) {
    throw new FileProblem(`${where} needs an "action": one of ${ACTION_WORDS}`, node.offset);
  }
  const rule: Pick<PermissionRule, 'action' | 'grant' | 'expiresAt'> = { action: readAction(actionNode, where) };
  const grantNode = fields.get('grant');
  if (grantNode !== undefined) {
    if (grantNode.type !== 'string' || !GRANT_ID_PATTERN.test(grantNode.value as string)) {
      throw new FileProblem(
        `${where}: "grant" must be an id of 1 to 64 letters, digits, "_" or "-" (such as "g_3f9a1c"), not ${describeNode(grantNode)}`,
        grantNode.offset,
      );
    }
    rule.grant = grantNode.value as string;
  }
  const expiresNode = fields.get('expires');
  if (expiresNode !== undefined) {
    const expires = expiresNode.type === 'string' ? safeParseRuleExpiry(expiresNode.value as string) : undefined;
    if (expires === undefined || !expires.ok) {
      throw new FileProblem(
        `${where}: "expires" must be a date and time such as "2026-11-24T18:00:00Z" (UTC) or ` +
          `"2026-11-24T19:00:00+01:00", not ${describeNode(expiresNode)}${expires === undefined ? '' : ` (${expires.message})`}`,
        expiresNode.offset,
      );
    }
    rule.expiresAt = expires.value;
  }
  return rule;
}

function readRules(text: string, root: Node): PermissionRule[] {
  if (root.type !== 'object') {
    throw new FileProblem(
      `the file must hold one object such as { "*": "ask", "read_file": "allow" }, not ${describeNode(root)}`,
      root.offset,
    );
  }
  const rules: PermissionRule[] = [];
  const tools = new Set<string>();
  /** Line of each grant id: an id names one rule, so that revoking it takes back exactly that rule. */
  const grants = new Map<string, number>();
  for (const property of root.children ?? []) {
    const [keyNode, valueNode] = property.children ?? [];
    if (keyNode === undefined || valueNode === undefined) continue;
    const tool = readPattern(keyNode, 'a tool name');
    if (tools.has(tool)) {
      throw new FileProblem(`"${tool}" appears twice: merge its rules into one entry`, keyNode.offset);
    }
    tools.add(tool);
    const at = (offset: number) => ({ layer: 'file' as const, ...textPosition(text, offset) });
    if (valueNode.type === 'object') {
      const patterns = new Set<string>();
      for (const entry of valueNode.children ?? []) {
        const [patternNode, actionNode] = entry.children ?? [];
        if (patternNode === undefined || actionNode === undefined) continue;
        const pattern = readPattern(patternNode, `"${tool}"`);
        if (patterns.has(pattern)) {
          throw new FileProblem(`"${tool}" lists the pattern "${pattern}" twice`, patternNode.offset);
        }
        patterns.add(pattern);
        const value = readRuleValue(actionNode, `"${tool}" → "${pattern}"`);
        const source = at(entry.offset);
        if (value.grant !== undefined) {
          const earlier = grants.get(value.grant);
          if (earlier !== undefined) {
            throw new FileProblem(
              `the grant id "${value.grant}" is used twice (also on line ${earlier}): each grant names one rule`,
              actionNode.offset,
            );
          }
          grants.set(value.grant, source.line);
        }
        rules.push({ tool, pattern, ...value, source });
      }
    } else {
      if (valueNode.type !== 'string') {
        throw new FileProblem(
          `the rules for "${tool}" must be one action (${ACTION_WORDS}) or an object of pattern → action, such as { "git status": "allow", "*": "ask" }; not ${describeNode(valueNode)}`,
          valueNode.offset,
        );
      }
      const action = readAction(valueNode, `"${tool}"`);
      rules.push({ tool, pattern: '*', action, source: at(property.offset) });
    }
  }
  return rules;
}

/**
 * Reads a `permissions.jsonc` text: `{ "tool": "allow" | "deny" | "ask", "tool": { "pattern": action } }`,
 * where a pattern's action may also be a rule object `{ "action": …, "grant": "g_…", "expires": "…" }`;
 * comments and trailing commas allowed. Rules keep file order (the last match wins). Every problem
 * names its line and column; nothing is guessed.
 */
export function safeParsePermissionsFile(text: string): PermissionsFileResult {
  const fail = (message: string, offset: number): PermissionsFileResult => ({
    ok: false,
    error: { message, offset, ...textPosition(text, offset) },
  });
  if (text.charCodeAt(0) === 0xfeff) {
    return fail('the file starts with a byte-order mark (BOM): save it as UTF-8 without BOM', 0);
  }
  const errors: ParseError[] = [];
  const root = parseTree(text, errors, { allowTrailingComma: true, disallowComments: false });
  // jsonc-parser reports a file with nothing but blanks and comments as "ValueExpected".
  if (root === undefined && stripComments(text).trim() === '') {
    return fail('the file is empty: it must hold one object such as { "*": "ask" }', 0);
  }
  const firstError = errors[0];
  if (firstError !== undefined) {
    return fail(describeJsoncError(firstError.error), firstError.offset);
  }
  if (root === undefined) {
    return fail('the file is empty: it must hold one object such as { "*": "ask" }', 0);
  }
  try {
    return { ok: true, rules: readRules(text, root) };
  } catch (error) {
    if (error instanceof FileProblem) return fail(error.message, error.offset);
    throw error;
  }
}

/**
 * Reads a subagent's `permission` (the same language as `permissions.jsonc`, given as a value from
 * its frontmatter) into rules of the agent layer. Problems name the tool and pattern, not a line.
 */
export function safeParseAgentRules(
  value: unknown,
  agent: string,
): { ok: true; rules: PermissionRule[] } | { ok: false; message: string } {
  const parsed = safeParsePermissionsFile(JSON.stringify(value ?? null));
  if (!parsed.ok) return { ok: false, message: parsed.error.message };
  return { ok: true, rules: parsed.rules.map((rule) => ({ ...rule, source: { layer: 'agent' as const, agent } })) };
}

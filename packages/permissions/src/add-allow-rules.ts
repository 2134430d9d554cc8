import { applyEdits, type FormattingOptions, findNodeAtLocation, modify, type Node, parseTree } from 'jsonc-parser';
import { safeParsePermissionsFile } from './parse-permissions-file.ts';

const FORMATTING: FormattingOptions = { tabSize: 2, insertSpaces: true, eol: '\n' };

/** What an "always" answer saves with a rule: its grant id, and when it expires (ms since the epoch). */
export type RuleGrant = { grant: string; expiresAt?: number | undefined };

/** The value a saved pattern gets in the file: `"allow"`, or a rule object carrying its grant. */
function allowValueText(grant: RuleGrant | undefined): string {
  if (grant === undefined) return '"allow"';
  const expires = grant.expiresAt === undefined ? '' : `, "expires": "${new Date(grant.expiresAt).toISOString()}"`;
  return `{ "action": "allow", "grant": ${JSON.stringify(grant.grant)}${expires} }`;
}

/** A pattern's action in the file: the word, or the `action` of a rule object. */
function actionOf(value: Node | undefined): unknown {
  if (value?.type !== 'object') return value?.value;
  return value.children?.find((field) => field.children?.[0]?.value === 'action')?.children?.[1]?.value;
}

/**
 * Whether a pattern's value is an allow for good (no `expires`): saving the pattern again changes
 * nothing. An allow that expires is replaced by the new one.
 */
function isLastingAllow(value: Node | undefined): boolean {
  if (actionOf(value) !== 'allow') return false;
  return value?.type !== 'object' || !(value.children ?? []).some((field) => field.children?.[0]?.value === 'expires');
}

/** Replaces the value of `tool` → `pattern` with `valueText`. */
function setValue(text: string, options: { tool: string; pattern: string; valueText: string }): string {
  const tree = parseTree(text);
  const value = tree === undefined ? undefined : findNodeAtLocation(tree, [options.tool, options.pattern]);
  if (value === undefined) return text;
  return `${text.slice(0, value.offset)}${options.valueText}${text.slice(value.offset + value.length)}`;
}

/**
 * Appends `"pattern": "allow"` to the object of `tool` when its last entry ends with a `//`
 * comment: jsonc-parser would insert the new entry before that comment, so that the comment would
 * seem to explain the new rule. Undefined when there is no such comment (or the pattern is present).
 */
function appendAfterLineComment(text: string, options: { tool: string; pattern: string }): string | undefined {
  const root = parseTree(text);
  const entries = (root === undefined ? undefined : findNodeAtLocation(root, [options.tool]))?.children ?? [];
  const last = entries[entries.length - 1];
  if (last === undefined || entries.some((entry) => entry.children?.[0]?.value === options.pattern)) return undefined;
  const end = last.offset + last.length;
  const lineEnd = text.indexOf('\n', end) === -1 ? text.length : text.indexOf('\n', end);
  const rest = /^(\s*)(,?)(\s*\/\/.*)$/.exec(text.slice(end, lineEnd));
  const indent = /[ \t]*$/.exec(text.slice(0, last.offset))?.[0] ?? '';
  if (rest === null || text.lastIndexOf('\n', last.offset) !== last.offset - indent.length - 1) return undefined;
  const entry = `${JSON.stringify(options.pattern)}: "allow"`;
  return `${text.slice(0, end)},${rest[1]}${rest[3]}\n${indent}${entry}${text.slice(lineEnd)}`;
}

function entriesOf(text: string, tool: string): Node[] {
  const tree = parseTree(text);
  return (tree === undefined ? undefined : findNodeAtLocation(tree, [tool]))?.children ?? [];
}

/**
 * Puts `"pattern": "allow"` just before the first deny entry of `tool`'s object, on a line of its
 * own when the deny has one (so every comment stays on its line); undefined when the object has no
 * deny entry (then appending is the same thing). A pattern already present keeps its place: a
 * lasting allow stays as it is, another action (or an allow that expires) becomes the new allow.
 */
function insertBeforeDenies(text: string, options: { tool: string; pattern: string }): string | undefined {
  const entries = entriesOf(text, options.tool);
  const existing = entries.find((entry) => entry.children?.[0]?.value === options.pattern);
  if (existing !== undefined) {
    if (isLastingAllow(existing.children?.[1])) return text;
    return setValue(text, { ...options, valueText: '"allow"' });
  }
  const deny = entries.find((entry) => actionOf(entry.children?.[1]) === 'deny');
  if (deny === undefined) return undefined;
  const entry = `${JSON.stringify(options.pattern)}: "allow",`;
  const lineStart = text.lastIndexOf('\n', deny.offset - 1) + 1;
  const indent = text.slice(lineStart, deny.offset);
  if (/^[ \t]*$/.test(indent)) {
    return `${text.slice(0, lineStart)}${indent}${entry}\n${text.slice(lineStart)}`;
  }
  return `${text.slice(0, deny.offset)}${entry} ${text.slice(deny.offset)}`;
}

/**
 * Adds allow rules for `tool` to a permissions file's text, keeping its comments and layout.
 * A pattern already present is moved (the last match wins, so an earlier copy could be overridden
 * by later rules); `"tool": "ask"` shorthand becomes `{ "*": "ask", … }`. With `placement:
 * 'before-denies'` the rules go just before the tool's first deny entry, so that the user's denies
 * keep winning over a broad "always" pattern (`git push *` must not lift `git push --force *`);
 * otherwise (the default) at the end of the tool's entries. With `grants`, a pattern is saved as
 * a rule object carrying its grant id and expiry (`{ "action": "allow", "grant": …, "expires": … }`);
 * a pattern already allowed for good is left as it is (and not in `added`), one whose allow
 * expires gets the new rule. Refuses a text that does not parse: it must never be "repaired" by accident.
 */
export function addAllowRules(
  text: string,
  options: {
    tool: string;
    patterns: readonly string[];
    placement?: 'end' | 'before-denies';
    /** The grant each pattern is saved as. Default none: plain `"allow"`. */
    grants?: ReadonlyMap<string, RuleGrant> | undefined;
  },
): { ok: true; text: string; added: string[] } | { ok: false; message: string } {
  const parsed = safeParsePermissionsFile(text);
  if (!parsed.ok)
    return { ok: false, message: `line ${parsed.error.line}, column ${parsed.error.column}: ${parsed.error.message}` };
  const { tool } = options;
  let current = text;
  const root = parseTree(current);
  const existing = root === undefined ? undefined : findNodeAtLocation(root, [tool]);
  const edit = (path: (string | number)[], value: unknown) => {
    current = applyEdits(current, modify(current, path, value, { formattingOptions: FORMATTING }));
  };
  /**
   * The saved patterns get their grants last, once every entry is in place: jsonc-parser formats
   * what an edit touches, and would spread a rule object written earlier over several lines.
   */
  const withValues = (patterns: readonly string[]) => {
    for (const pattern of patterns) {
      const grant = options.grants?.get(pattern);
      if (grant !== undefined) current = setValue(current, { tool, pattern, valueText: allowValueText(grant) });
    }
    return { ok: true as const, text: current, added: [...patterns] };
  };
  // `"tool": "allow"` cannot carry a grant: a granted "*" goes into an object like any pattern.
  const wholeTool = options.patterns.length === 1 && options.patterns[0] === '*' && options.grants === undefined;

  if (existing === undefined) {
    if (wholeTool) {
      edit([tool], 'allow');
    } else {
      edit([tool], Object.fromEntries(options.patterns.map((pattern) => [pattern, 'allow'])));
    }
    return withValues(options.patterns);
  }
  if (existing.type === 'string') {
    if (existing.value === 'allow' && options.patterns.length === 1 && options.patterns[0] === '*') {
      return { ok: true, text: current, added: [] };
    }
    if (wholeTool) {
      edit([tool], 'allow');
      return { ok: true, text: current, added: ['*'] };
    }
    edit([tool], { '*': existing.value, ...Object.fromEntries(options.patterns.map((pattern) => [pattern, 'allow'])) });
    return withValues(options.patterns);
  }
  const added: string[] = [];
  for (const pattern of options.patterns) {
    if (options.placement === 'before-denies') {
      const inserted = insertBeforeDenies(current, { tool, pattern });
      if (inserted !== undefined) {
        if (inserted !== current) added.push(pattern);
        current = inserted;
        continue;
      }
    }
    const tree = parseTree(current);
    const object = tree === undefined ? undefined : findNodeAtLocation(tree, [tool]);
    const entries = object?.children ?? [];
    const last = entries[entries.length - 1];
    const [lastKey, lastValue] = last?.children ?? [];
    if (lastKey?.value === pattern && isLastingAllow(lastValue)) continue;
    const at = entries.findIndex((entry) => entry.children?.[0]?.value === pattern);
    const next = entries[at + 1];
    if (at !== -1 && next !== undefined) {
      // Cut up to the next entry: jsonc-parser's own removal also eats a comment that ends the
      // entry before this one.
      current = `${current.slice(0, (entries[at] as Node).offset)}${current.slice(next.offset)}`;
    }
    const appended = appendAfterLineComment(current, { tool, pattern });
    if (appended === undefined) edit([tool, pattern], 'allow');
    else current = appended;
    added.push(pattern);
  }
  return withValues(added);
}

import { applyEdits, type FormattingOptions, findNodeAtLocation, modify, parseTree } from 'jsonc-parser';
import { safeParsePermissionsFile } from './parse-permissions-file.ts';

const FORMATTING: FormattingOptions = { tabSize: 2, insertSpaces: true, eol: '\n' };

/**
 * Appends allow rules for `tool` to a permissions file's text, keeping its comments and layout.
 * A pattern already present is moved to the end (the last match wins, so an earlier copy could
 * be overridden by later rules); `"tool": "ask"` shorthand becomes `{ "*": "ask", … }`.
 * Refuses a text that does not parse: it must never be "repaired" by accident.
 */
export function addAllowRules(
  text: string,
  options: { tool: string; patterns: readonly string[] },
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

  if (existing === undefined) {
    if (options.patterns.length === 1 && options.patterns[0] === '*') {
      edit([tool], 'allow');
    } else {
      edit([tool], Object.fromEntries(options.patterns.map((pattern) => [pattern, 'allow'])));
    }
    return { ok: true, text: current, added: [...options.patterns] };
  }
  if (existing.type === 'string') {
    if (options.patterns.length === 1 && options.patterns[0] === '*') {
      if (existing.value === 'allow') return { ok: true, text: current, added: [] };
      edit([tool], 'allow');
      return { ok: true, text: current, added: ['*'] };
    }
    edit([tool], { '*': existing.value, ...Object.fromEntries(options.patterns.map((pattern) => [pattern, 'allow'])) });
    return { ok: true, text: current, added: [...options.patterns] };
  }
  const added: string[] = [];
  for (const pattern of options.patterns) {
    const tree = parseTree(current);
    const object = tree === undefined ? undefined : findNodeAtLocation(tree, [tool]);
    const entries = object?.children ?? [];
    const last = entries[entries.length - 1];
    const [lastKey, lastValue] = last?.children ?? [];
    if (lastKey?.value === pattern && lastValue?.value === 'allow') continue;
    if (entries.some((entry) => entry.children?.[0]?.value === pattern)) edit([tool, pattern], undefined);
    edit([tool, pattern], 'allow');
    added.push(pattern);
  }
  return { ok: true, text: current, added };
}

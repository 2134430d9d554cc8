import { findNodeAtLocation, type Node, parseTree } from 'jsonc-parser';
import { safeParsePermissionsFile } from './parse-permissions-file.ts';
import type { PermissionRule } from './permission-rule.ts';

export type RemoveGrantResult =
  | { ok: true; text: string; rule: PermissionRule }
  | { ok: false; reason: 'not_found' | 'invalid'; message: string };

/** The end of the line holding `offset` (the index of its newline, or the text's end). */
function lineEnd(text: string, offset: number): number {
  const newline = text.indexOf('\n', offset);
  return newline === -1 ? text.length : newline;
}

/**
 * The text of a pattern object without `entries[at]`. An entry on lines of its own goes with those
 * lines, its trailing comma and `//` comment included, so that the comments on the lines around it
 * stay with their rules; an entry sharing its line with others goes with the comma that joins it.
 */
function withoutEntry(text: string, entries: readonly Node[], at: number): string {
  const entry = entries[at] as Node;
  const end = entry.offset + entry.length;
  const previous = entries[at - 1];
  const next = entries[at + 1];
  const lineStart = text.lastIndexOf('\n', entry.offset - 1) + 1;
  const ownLine =
    /^[ \t]*$/.test(text.slice(lineStart, entry.offset)) &&
    /^[ \t]*,?[ \t]*(?:\/\/.*)?$/.test(text.slice(end, lineEnd(text, end)));
  if (ownLine) {
    let cut = `${text.slice(0, lineStart)}${text.slice(Math.min(lineEnd(text, end) + 1, text.length))}`;
    if (next === undefined && previous !== undefined) {
      // The entry was the last: the comma after the one before it would now trail.
      const previousEnd = previous.offset + previous.length;
      const comma = /^[ \t]*,/.exec(cut.slice(previousEnd));
      if (comma !== null)
        cut = `${cut.slice(0, previousEnd + comma[0].length - 1)}${cut.slice(previousEnd + comma[0].length)}`;
    }
    return cut;
  }
  if (next !== undefined) return `${text.slice(0, entry.offset)}${text.slice(next.offset)}`;
  if (previous !== undefined) return `${text.slice(0, previous.offset + previous.length)}${text.slice(end)}`;
  return `${text.slice(0, entry.offset)}${text.slice(end)}`;
}

/**
 * Removes the rule whose `grant` is `grantId` from a permissions file's text, keeping every other
 * rule, comment and the layout. Refuses a text that does not parse (`invalid`), and an id no rule
 * carries (`not_found`); the result is checked to parse, without that rule.
 */
export function removeGrantRule(text: string, grantId: string): RemoveGrantResult {
  const parsed = safeParsePermissionsFile(text);
  if (!parsed.ok) {
    return {
      ok: false,
      reason: 'invalid',
      message: `line ${parsed.error.line}, column ${parsed.error.column}: ${parsed.error.message}`,
    };
  }
  const rule = parsed.rules.find((candidate) => candidate.grant === grantId);
  if (rule === undefined)
    return { ok: false, reason: 'not_found', message: `no rule carries the grant id "${grantId}"` };
  const tree = parseTree(text);
  const entries = (tree === undefined ? undefined : findNodeAtLocation(tree, [rule.tool]))?.children ?? [];
  const at = entries.findIndex((entry) => entry.children?.[0]?.value === rule.pattern);
  const updated = at === -1 ? undefined : withoutEntry(text, entries, at);
  const check = updated === undefined ? undefined : safeParsePermissionsFile(updated);
  if (updated === undefined || check === undefined || !check.ok || check.rules.some((r) => r.grant === grantId)) {
    return { ok: false, reason: 'invalid', message: `the rule of grant "${grantId}" could not be cut out of the file` };
  }
  return { ok: true, text: updated, rule };
}

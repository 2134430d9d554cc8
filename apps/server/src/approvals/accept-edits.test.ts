import { createPermissionEngine, type PermissionRule, safeParsePermissionsFile } from '@molf/permissions';
import { describe, expect, it } from 'vitest';
import { acceptEdit, acceptEditsRule } from './accept-edits.ts';

function rules(text: string): PermissionRule[] {
  const parsed = safeParsePermissionsFile(text);
  if (!parsed.ok) throw new Error(parsed.error.message);
  return parsed.rules;
}

const FILE = rules(`{
  "*": "ask",
  "edit_file": { "*": "ask", "*.env": "deny", "package.json": "ask", "docs/*": "allow" },
  "write_file": { "src/*": "ask" }
}`);

const engine = await createPermissionEngine({ lazyParser: true });

/** The decision for a call of `tool` on `path`, which the worker said leads to `forms`, after "accept edits". */
function judge(
  tool: string,
  path: string,
  options: { forms?: string[]; agent?: PermissionRule[]; file?: PermissionRule[] } = {},
) {
  const evaluation = engine.evaluate({
    now: 0,
    tool,
    args: { path },
    layers: { file: options.file ?? FILE, ...(options.agent === undefined ? {} : { agent: options.agent }) },
    canonicalPaths: () => options.forms ?? [path, `/work/${path}`],
  });
  const accepted = acceptEdit(evaluation, { tool, rule: acceptEditsRule(tool) });
  return accepted.decision.type;
}

describe('acceptEdit', () => {
  it.each([
    ['lifts an ask of the blanket rule of the tool', 'edit_file', 'src/a.ts', 'allow'],
    ['lifts an ask of the catch-all "*": "ask"', 'write_file', 'notes.md', 'allow'],
    ['keeps a deny', 'edit_file', 'app.env', 'deny'],
    ['keeps an ask of a rule naming the file', 'edit_file', 'package.json', 'ask'],
    ['keeps an ask of a rule naming a folder', 'write_file', 'src/a.ts', 'ask'],
    ['leaves an allow as it is', 'edit_file', 'docs/a.md', 'allow'],
    ['does nothing for another tool', 'read_file', 'notes.md', 'ask'],
  ])('%s', (_title, tool, path, decision) => {
    expect(judge(tool, path)).toBe(decision);
  });

  it('lifts an ask no rule makes, for a path inside the workdir', () => {
    expect(judge('edit_file', 'a.txt', { file: rules('{ "read_file": "allow" }') })).toBe('allow');
  });

  it('keeps asking for a path outside the workdir, however it was written', () => {
    expect(judge('write_file', '/etc/hosts', { forms: ['/etc/hosts'] })).toBe('ask');
    expect(judge('write_file', 'link.txt', { forms: ['/home/me/elsewhere.txt'] })).toBe('ask');
    expect(judge('write_file', '../x.txt', { forms: ['../x.txt'] })).toBe('ask');
  });

  it('keeps the ask of a subagent’s own rules', () => {
    const agent: PermissionRule[] = [
      { tool: 'edit_file', pattern: '*', action: 'ask', source: { layer: 'agent', agent: 'explore' } },
    ];
    expect(judge('edit_file', 'docs/a.md', { agent })).toBe('ask');
  });
});

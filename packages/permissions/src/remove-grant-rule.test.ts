import { describe, expect, it } from 'vitest';
import { safeParsePermissionsFile } from './parse-permissions-file.ts';
import { removeGrantRule } from './remove-grant-rule.ts';

function lines(...rows: string[]): string {
  return `${rows.join('\n')}\n`;
}

function removed(text: string, grantId: string): string {
  const result = removeGrantRule(text, grantId);
  if (!result.ok) throw new Error(result.message);
  return result.text;
}

const GRANTED = (id: string) => `{ "action": "allow", "grant": "${id}" }`;

describe('removeGrantRule', () => {
  const file = lines(
    '// my rules',
    '{',
    '  "shell_exec": {',
    '    "*": "ask", // ask by default',
    '    // tests are fine',
    `    "npm test": ${GRANTED('g_1')}, // saved by "always"`,
    '    // and so is the status',
    `    "git status": ${GRANTED('g_2')}`,
    '  },',
    `  "grep": { "*": "ask", "src/*": ${GRANTED('g_3')}, "docs/*": "allow" }`,
    '}',
  );

  it('removes a rule on a line of its own with its line, leaving the comments of the rules around it', () => {
    expect(removed(file, 'g_1')).toBe(
      lines(
        '// my rules',
        '{',
        '  "shell_exec": {',
        '    "*": "ask", // ask by default',
        '    // tests are fine',
        '    // and so is the status',
        `    "git status": ${GRANTED('g_2')}`,
        '  },',
        `  "grep": { "*": "ask", "src/*": ${GRANTED('g_3')}, "docs/*": "allow" }`,
        '}',
      ),
    );
  });

  it('removes the last rule of an object without leaving a trailing comma', () => {
    const text = removed(file, 'g_2');
    expect(text).toContain(`    "npm test": ${GRANTED('g_1')} // saved by "always"\n    // and so is the status\n  },`);
    expect(safeParsePermissionsFile(text)).toMatchObject({ ok: true });
  });

  it('removes a rule that shares its line with others, and only that rule', () => {
    expect(removed(file, 'g_3')).toContain('  "grep": { "*": "ask", "docs/*": "allow" }\n');
    const last = removed('{ "grep": { "*": "ask", "src/*": { "action": "allow", "grant": "g_9" } } }', 'g_9');
    expect(last).toBe('{ "grep": { "*": "ask" } }');
    expect(removed('{ "grep": { "src/*": { "action": "allow", "grant": "g_9" } } }', 'g_9')).toBe('{ "grep": {  } }');
  });

  it('says not_found for an id no rule carries and invalid for a file that does not parse, changing nothing', () => {
    expect(removeGrantRule(file, 'g_nope')).toEqual({
      ok: false,
      reason: 'not_found',
      message: 'no rule carries the grant id "g_nope"',
    });
    expect(removeGrantRule('{ "grep": "alow" }', 'g_1')).toMatchObject({ ok: false, reason: 'invalid' });
  });

  it('returns the rule it removed', () => {
    expect(removeGrantRule(file, 'g_2')).toMatchObject({
      ok: true,
      rule: { tool: 'shell_exec', pattern: 'git status', action: 'allow', grant: 'g_2' },
    });
  });
});

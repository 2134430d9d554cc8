import { describe, expect, it } from 'vitest';
import { addAllowRules } from './add-allow-rules.ts';
import { safeParsePermissionsFile } from './parse-permissions-file.ts';

function lines(...rows: string[]): string {
  return `${rows.join('\n')}\n`;
}

/** The text an edit produced, or a thrown refusal. */
function added(
  text: string,
  options: { tool: string; patterns: string[]; placement?: 'end' | 'before-denies' },
): { text: string; added: string[] } {
  const result = addAllowRules(text, options);
  if (!result.ok) throw new Error(result.message);
  return result;
}

function rulesOf(text: string): string[] {
  const parsed = safeParsePermissionsFile(text);
  if (!parsed.ok) throw new Error(parsed.error.message);
  return parsed.rules.map((rule) => `${rule.tool} ${rule.pattern} ${rule.action}`);
}

describe('addAllowRules', () => {
  const file = lines(
    '// my rules',
    '{',
    '  "*": "ask",',
    '  "shell_exec": {',
    '    "*": "ask", // ask by default',
    '    "git status": "allow",',
    '    "npm test": "allow" // tests are fine',
    '  }',
    '}',
  );

  it('appends to an existing pattern object, keeping every comment', () => {
    const result = added(file, { tool: 'shell_exec', patterns: ['git push *'] });
    expect(result.added).toEqual(['git push *']);
    expect(result.text).toBe(
      lines(
        '// my rules',
        '{',
        '  "*": "ask",',
        '  "shell_exec": {',
        '    "*": "ask", // ask by default',
        '    "git status": "allow",',
        '    "npm test": "allow", // tests are fine',
        '    "git push *": "allow"',
        '  }',
        '}',
      ),
    );
    expect(rulesOf(result.text).at(-1)).toBe('shell_exec git push * allow');
  });

  it('appends after a comment that follows a trailing comma', () => {
    const text = lines('{', '  "grep": {', '    "*": "ask", // ask first', '  },', '}');
    const result = added(text, { tool: 'grep', patterns: ['src/*'] });
    expect(result.text).toBe(
      lines('{', '  "grep": {', '    "*": "ask", // ask first', '    "src/*": "allow"', '  },', '}'),
    );
  });

  it('adds nothing when the same pattern is saved again', () => {
    const once = added(file, { tool: 'shell_exec', patterns: ['git push *'] });
    const twice = added(once.text, { tool: 'shell_exec', patterns: ['git push *'] });
    expect(twice).toEqual({ ok: true, text: once.text, added: [] });
  });

  it('moves an earlier copy of the pattern to the end, keeping the comment before it', () => {
    const result = added(file, { tool: 'shell_exec', patterns: ['git status'] });
    expect(result.added).toEqual(['git status']);
    expect(result.text).toBe(
      lines(
        '// my rules',
        '{',
        '  "*": "ask",',
        '  "shell_exec": {',
        '    "*": "ask", // ask by default',
        '    "npm test": "allow", // tests are fine',
        '    "git status": "allow"',
        '  }',
        '}',
      ),
    );
  });

  it('moves a pattern the file denies to the end as an allow, where it wins', () => {
    const text = lines('{', '  "shell_exec": {', '    "git push *": "deny",', '    "*": "ask"', '  }', '}');
    const result = added(text, { tool: 'shell_exec', patterns: ['git push *'] });
    expect(rulesOf(result.text)).toEqual(['shell_exec * ask', 'shell_exec git push * allow']);
  });

  it('promotes "shell_exec": "ask" to an object that keeps the ask for everything else', () => {
    const text = lines('{', '  "*": "ask",', '  "shell_exec": "ask" // shell', '}');
    const result = added(text, { tool: 'shell_exec', patterns: ['git push *'] });
    expect(result.text).toBe(
      lines(
        '{',
        '  "*": "ask",',
        '  "shell_exec": {',
        '    "*": "ask",',
        '    "git push *": "allow"',
        '  } // shell',
        '}',
      ),
    );
    expect(rulesOf(result.text)).toEqual(['* * ask', 'shell_exec * ask', 'shell_exec git push * allow']);
  });

  it('adds a tool the file does not name yet, with every pattern in order', () => {
    const result = added(lines('{', '  "*": "ask"', '}'), { tool: 'read_file', patterns: ['src/a.ts', 'src/b.ts'] });
    expect(result.text).toBe(
      lines(
        '{',
        '  "*": "ask",',
        '  "read_file": {',
        '    "src/a.ts": "allow",',
        '    "src/b.ts": "allow"',
        '  }',
        '}',
      ),
    );
  });

  it('saves the "*" pattern of an MCP tool as "tool": "allow"', () => {
    const result = added(lines('{', '  "*": "ask"', '}'), { tool: 'github_create_issue', patterns: ['*'] });
    expect(result.text).toBe(lines('{', '  "*": "ask",', '  "github_create_issue": "allow"', '}'));
    expect(result.added).toEqual(['*']);
  });

  it('turns an MCP tool that asks into one that is allowed, and leaves an allowed one alone', () => {
    const asking = lines('{', '  "*": "ask",', '  "github_create_issue": "ask"', '}');
    const allowed = added(asking, { tool: 'github_create_issue', patterns: ['*'] });
    expect(allowed.text).toBe(lines('{', '  "*": "ask",', '  "github_create_issue": "allow"', '}'));
    expect(added(allowed.text, { tool: 'github_create_issue', patterns: ['*'] })).toEqual({
      ok: true,
      text: allowed.text,
      added: [],
    });
  });

  it('refuses a file that does not parse, naming the line and column, and never repairs it', () => {
    expect(addAllowRules(lines('{', '  "*": "ask"', '  "grep": "allow"', '}'), { tool: 'x', patterns: ['*'] })).toEqual(
      {
        ok: false,
        message: 'line 3, column 3: invalid JSONC: CommaExpected',
      },
    );
    expect(addAllowRules(lines('{', '  "x": "alow"', '}'), { tool: 'x', patterns: ['*'] })).toEqual({
      ok: false,
      message: 'line 2, column 8: "x" is "alow", which is not an action: use one of "allow", "deny", "ask"',
    });
    expect(addAllowRules('', { tool: 'x', patterns: ['*'] })).toMatchObject({ ok: false });
  });

  it('puts a new allow before the first deny of the tool with placement "before-denies", keeping every comment', () => {
    const text = lines(
      '{',
      '  "*": "ask",',
      '  "shell_exec": {',
      '    "*": "ask", // ask for everything',
      '    "git push *--force*": "deny", // never force',
      '    "ls": "allow"',
      '  }',
      '}',
    );
    const result = added(text, { tool: 'shell_exec', patterns: ['git push *', 'ls'], placement: 'before-denies' });
    expect(result.text).toBe(
      lines(
        '{',
        '  "*": "ask",',
        '  "shell_exec": {',
        '    "*": "ask", // ask for everything',
        '    "git push *": "allow",',
        '    "git push *--force*": "deny", // never force',
        '    "ls": "allow"',
        '  }',
        '}',
      ),
    );
    expect(result.added).toEqual(['git push *']);
    expect(
      added(result.text, { tool: 'shell_exec', patterns: ['git push *'], placement: 'before-denies' }).added,
    ).toEqual([]);
    const oneLine = added('{ "shell_exec": { "*": "ask", "rm *": "deny" } }', {
      tool: 'shell_exec',
      patterns: ['make *'],
      placement: 'before-denies',
    });
    expect(oneLine.text).toBe('{ "shell_exec": { "*": "ask", "make *": "allow", "rm *": "deny" } }');
  });
});

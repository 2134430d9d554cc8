import { describe, expect, it } from 'vitest';
import { addAllowRules } from './add-allow-rules.ts';
import { safeParsePermissionsFile } from './parse-permissions-file.ts';

function lines(...rows: string[]): string {
  return `${rows.join('\n')}\n`;
}

/** The text an edit produced, or a thrown refusal. */
function added(text: string, options: Parameters<typeof addAllowRules>[1]): { text: string; added: string[] } {
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
        message: 'line 3, column 3: a comma is missing between two entries',
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

describe('addAllowRules with grants', () => {
  const expiresAt = Date.UTC(2026, 10, 24, 18);
  const grants = (entries: Record<string, number | undefined>) =>
    new Map(
      Object.entries(entries).map(([pattern, expires], index) => [
        pattern,
        { grant: `g_${index}`, expiresAt: expires },
      ]),
    );

  it('saves each pattern as a one-line rule object with its grant id and expiry, keeping every comment', () => {
    const text = lines(
      '{',
      '  "shell_exec": {',
      '    "*": "ask", // ask first',
      '    "rm *": "deny" // never',
      '  }',
      '}',
    );
    const result = added(text, {
      tool: 'shell_exec',
      patterns: ['npm test', 'git status'],
      placement: 'before-denies',
      grants: grants({ 'npm test': expiresAt, 'git status': undefined }),
    });
    expect(result.text).toBe(
      lines(
        '{',
        '  "shell_exec": {',
        '    "*": "ask", // ask first',
        '    "npm test": { "action": "allow", "grant": "g_0", "expires": "2026-11-24T18:00:00.000Z" },',
        '    "git status": { "action": "allow", "grant": "g_1" },',
        '    "rm *": "deny" // never',
        '  }',
        '}',
      ),
    );
    expect(safeParsePermissionsFile(result.text)).toMatchObject({
      ok: true,
      rules: [
        { pattern: '*' },
        { pattern: 'npm test', grant: 'g_0', expiresAt },
        { pattern: 'git status', grant: 'g_1' },
        {},
      ],
    });
  });

  it('before the denies, keeps a pattern allowed for good as it is, and replaces one whose allow expires', () => {
    const text = lines(
      '{',
      '  "shell_exec": {',
      '    "*": "ask",',
      '    "ls": "allow",',
      '    "make *": { "action": "allow", "grant": "g_old", "expires": "2026-01-01T00:00:00Z" }',
      '  }',
      '}',
    );
    const result = added(text, {
      tool: 'shell_exec',
      patterns: ['ls', 'make *'],
      placement: 'before-denies',
      grants: grants({ ls: undefined, 'make *': undefined }),
    });
    expect(result.added).toEqual(['make *']);
    expect(result.text).toContain('"ls": "allow",');
    expect(result.text).toContain('"make *": { "action": "allow", "grant": "g_1" }');
    expect(result.text).not.toContain('g_old');
  });

  it('saves the "*" of an MCP tool as a pattern of its own, since "tool": "allow" cannot carry a grant', () => {
    const asking = lines('{', '  "*": "ask",', '  "github_create_issue": "ask"', '}');
    const result = added(asking, { tool: 'github_create_issue', patterns: ['*'], grants: grants({ '*': expiresAt }) });
    expect(safeParsePermissionsFile(result.text)).toMatchObject({
      ok: true,
      rules: [{ tool: '*' }, { tool: 'github_create_issue', pattern: '*', action: 'allow', grant: 'g_0', expiresAt }],
    });
  });
});

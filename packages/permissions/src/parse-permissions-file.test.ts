import { describe, expect, it } from 'vitest';
import { readDefaultPermissionsText } from './default-permissions-file.ts';
import {
  MAX_PATTERN_CHARS,
  safeParseAgentRules,
  safeParsePermissionsFile,
  safeParseRulePattern,
} from './parse-permissions-file.ts';

const ACTIONS = '"allow", "deny", "ask"';
const ONE_OBJECT = 'the file must hold one object such as { "*": "ask", "read_file": "allow" }';
const EMPTY = 'the file is empty: it must hold one object such as { "*": "ask" }';
const SYMBOL =
  'this is not JSON: names and text need double quotes ("allow", not \'allow\' or allow), and a value is a string, number, true, false, null, object or list';
/** What a tool's value must be, before "; not …". */
const TOOL_RULES = (tool: string) =>
  `the rules for "${tool}" must be one action (${ACTIONS}) or an object of pattern → action, such as { "git status": "allow", "*": "ask" }`;

describe('safeParsePermissionsFile: files it refuses', () => {
  it.each([
    ['an array', '[{ "tool": "read_file" }]', `${ONE_OBJECT}, not an array`, 1, 1],
    ['a string', '"allow"', `${ONE_OBJECT}, not the string "allow"`, 1, 1],
    ['a number', '42', `${ONE_OBJECT}, not the number 42`, 1, 1],
    ['null', 'null', `${ONE_OBJECT}, not null`, 1, 1],
    ['an array after comment lines', '// rules\n\n  [1]', `${ONE_OBJECT}, not an array`, 3, 3],
    [
      'an unknown action word',
      '{\n  "read_file": "alow"\n}',
      `"read_file" is "alow", which is not an action: use one of ${ACTIONS}`,
      2,
      16,
    ],
    [
      'an action word in the wrong case inside a pattern object',
      '{\n  "read_file": {\n    "*": "Allow"\n  }\n}',
      `"read_file" → "*" is "Allow", which is not an action: use one of ${ACTIONS}`,
      3,
      10,
    ],
    ['a number as an action', '{\n  "read_file": 1\n}', `${TOOL_RULES('read_file')}; not the number 1`, 2, 16],
    ['null as an action', '{\n  "grep": null\n}', `${TOOL_RULES('grep')}; not null`, 2, 11],
    [
      'a boolean as a pattern action',
      '{ "grep": { "*": true } }',
      `"grep" → "*" must be one of ${ACTIONS}, not the boolean true`,
      1,
      18,
    ],
    [
      'an object nested one level too deep',
      '{\n  "read_file": {\n    "*": { "src/*": "allow" }\n  }\n}',
      `"read_file" → "*" has an unknown field "src/*": a rule object takes "action", and optionally "grant" and "expires"`,
      3,
      12,
    ],
    [
      'a rule object without an action',
      '{\n  "shell_exec": {\n    "npm test": { "grant": "g_1" }\n  }\n}',
      `"shell_exec" → "npm test" needs an "action": one of ${ACTIONS}`,
      3,
      17,
    ],
    [
      'a rule object giving a field twice',
      '{ "grep": { "*": { "action": "allow", "action": "deny" } } }',
      '"grep" → "*" gives "action" twice',
      1,
      39,
    ],
    [
      'an expiry that is not a date',
      '{\n  "shell_exec": {\n    "npm test": { "action": "allow", "expires": "next tuesday" }\n  }\n}',
      `"shell_exec" → "npm test": "expires" must be a date and time such as "2026-11-24T18:00:00Z" (UTC) or "2026-11-24T19:00:00+01:00", not the string "next tuesday" (not an ISO 8601 date and time with "Z" or an offset)`,
      3,
      49,
    ],
    [
      'an expiry on a day that does not exist',
      '{ "grep": { "*": { "action": "allow", "expires": "2026-02-30T10:00:00Z" } } }',
      `"grep" → "*": "expires" must be a date and time such as "2026-11-24T18:00:00Z" (UTC) or "2026-11-24T19:00:00+01:00", not the string "2026-02-30T10:00:00Z" (no such date or time)`,
      1,
      50,
    ],
    [
      'an expiry without a time zone',
      '{ "grep": { "*": { "action": "allow", "expires": "2026-11-24T18:00:00" } } }',
      `"grep" → "*": "expires" must be a date and time such as "2026-11-24T18:00:00Z" (UTC) or "2026-11-24T19:00:00+01:00", not the string "2026-11-24T18:00:00" (not an ISO 8601 date and time with "Z" or an offset)`,
      1,
      50,
    ],
    [
      'a number as an expiry',
      '{ "grep": { "*": { "action": "allow", "expires": 1790000000000 } } }',
      `"grep" → "*": "expires" must be a date and time such as "2026-11-24T18:00:00Z" (UTC) or "2026-11-24T19:00:00+01:00", not the number 1790000000000`,
      1,
      50,
    ],
    [
      'a grant id with a space',
      '{ "grep": { "*": { "action": "allow", "grant": "g 1" } } }',
      `"grep" → "*": "grant" must be an id of 1 to 64 letters, digits, "_" or "-" (such as "g_3f9a1c"), not the string "g 1"`,
      1,
      48,
    ],
    [
      'a grant id on two rules',
      '{\n  "grep": { "*": { "action": "allow", "grant": "g_1" } },\n  "glob": { "*": { "action": "allow", "grant": "g_1" } }\n}',
      'the grant id "g_1" is used twice (also on line 2): each grant names one rule',
      3,
      18,
    ],
    ['an array of actions', '{\n  "read_file": ["allow"]\n}', `${TOOL_RULES('read_file')}; not an array`, 2, 16],
    [
      'a tool key written twice',
      '{\n  "read_file": "allow",\n  "grep": "allow",\n  "read_file": "deny"\n}',
      '"read_file" appears twice: merge its rules into one entry',
      4,
      3,
    ],
    [
      'a pattern written twice',
      '{\n  "read_file": {\n    "*.env": "deny",\n    "*": "allow",\n    "*.env": "allow"\n  }\n}',
      '"read_file" lists the pattern "*.env" twice',
      5,
      5,
    ],
    [
      'a byte-order mark',
      '\uFEFF{ "*": "ask" }',
      'the file starts with a byte-order mark (BOM): save it as UTF-8 without BOM',
      1,
      1,
    ],
    ['an empty file', '', EMPTY, 1, 1],
    ['a file of blank lines', '  \n\n', EMPTY, 1, 1],
    ['a file of only comments', '// no rules yet\n/* none */\n', EMPTY, 1, 1],
    [
      'a missing comma',
      '{\n  "read_file": "allow"\n  "grep": "allow"\n}',
      'a comma is missing between two entries',
      3,
      3,
    ],
    ['a missing closing brace', '{\n  "read_file": "allow"\n', 'an object is not closed: a } is missing', 3, 1],
    ['single-quoted keys', "{\n  'read_file': 'allow'\n}", SYMBOL, 2, 3],
    [
      'a second object',
      '{ "grep": "allow" }\n{ }',
      'the file goes on after its object is closed: everything must be inside one { … }',
      2,
      1,
    ],
    [
      'an empty tool name',
      '{\n  "": "allow"\n}',
      'a tool name: a pattern cannot be empty (use "*" for everything)',
      2,
      3,
    ],
    [
      'an empty pattern',
      '{\n  "grep": {\n    "": "deny"\n  }\n}',
      '"grep": a pattern cannot be empty (use "*" for everything)',
      3,
      5,
    ],
    [
      'a pattern over the length limit',
      `{ "grep": { "${'a'.repeat(MAX_PATTERN_CHARS + 1)}": "deny" } }`,
      `"grep": a pattern is longer than ${MAX_PATTERN_CHARS} characters`,
      1,
      13,
    ],
  ])('refuses %s with the exact message, line and column', (_title, text, message, line, column) => {
    const result = safeParsePermissionsFile(text);
    expect(result).toEqual({ ok: false, error: { message, line, column, offset: expect.any(Number) } });
  });

  it('gives an offset that points at the same place as the line and column', () => {
    const text = '{\n  "read_file": {\n    "*": "Allow"\n  }\n}';
    const result = safeParsePermissionsFile(text);
    if (result.ok) throw new Error('expected a refusal');
    expect(text.slice(result.error.offset)).toMatch(/^"Allow"/);
  });
});

describe('safeParsePermissionsFile: files it reads', () => {
  const text = [
    '// Molf rules',
    '{',
    '  "*": "ask", // everything else',
    '  "read_file": {',
    '    /* broad first */ "*": "allow",',
    '    "*.env": "deny",',
    '    "*.env.example": "allow",',
    '  },',
    '  "shell_exec": {',
    '    "git status": "allow",',
    '    "rm *": "deny",',
    '  },',
    '  "github_*": "allow",',
    '}',
    '',
  ].join('\n');

  it('keeps the rules in file order with the line and column of each', () => {
    const result = safeParsePermissionsFile(text);
    if (!result.ok) throw new Error(result.error.message);
    expect(result.rules.map((rule) => [rule.tool, rule.pattern, rule.action, rule.source])).toEqual([
      ['*', '*', 'ask', { layer: 'file', line: 3, column: 3 }],
      ['read_file', '*', 'allow', { layer: 'file', line: 5, column: 23 }],
      ['read_file', '*.env', 'deny', { layer: 'file', line: 6, column: 5 }],
      ['read_file', '*.env.example', 'allow', { layer: 'file', line: 7, column: 5 }],
      ['shell_exec', 'git status', 'allow', { layer: 'file', line: 10, column: 5 }],
      ['shell_exec', 'rm *', 'deny', { layer: 'file', line: 11, column: 5 }],
      ['github_*', '*', 'allow', { layer: 'file', line: 13, column: 3 }],
    ]);
  });

  it('reads a rule object with its grant id and expiry, an offset turned into the same moment', () => {
    const result = safeParsePermissionsFile(
      [
        '{',
        '  "shell_exec": {',
        '    "*": "ask",',
        '    "npm test": { "action": "allow", "grant": "g_0123456789abcdef", "expires": "2026-11-24T18:00:00.000Z" },',
        '    "make *": { "action": "allow", "expires": "2026-11-24T19:00:00+01:00" }, // by hand',
        '    "git push *": { "action": "deny" },',
        '  },',
        '}',
      ].join('\n'),
    );
    if (!result.ok) throw new Error(result.error.message);
    expect(result.rules.map(({ source: _source, ...rule }) => rule)).toEqual([
      { tool: 'shell_exec', pattern: '*', action: 'ask' },
      {
        tool: 'shell_exec',
        pattern: 'npm test',
        action: 'allow',
        grant: 'g_0123456789abcdef',
        expiresAt: Date.UTC(2026, 10, 24, 18),
      },
      { tool: 'shell_exec', pattern: 'make *', action: 'allow', expiresAt: Date.UTC(2026, 10, 24, 18) },
      { tool: 'shell_exec', pattern: 'git push *', action: 'deny' },
    ]);
  });

  it('reads an empty object as no rules at all (everything then asks)', () => {
    expect(safeParsePermissionsFile('{}')).toEqual({ ok: true, rules: [] });
    expect(safeParsePermissionsFile('{ "grep": {} }')).toEqual({ ok: true, rules: [] });
  });

  it('reads the shipped default file', () => {
    const result = safeParsePermissionsFile(readDefaultPermissionsText());
    if (!result.ok) throw new Error(result.error.message);
    expect(result.rules[0]).toMatchObject({ tool: '*', pattern: '*', action: 'ask' });
    expect(result.rules.filter((rule) => rule.tool === 'read_file').map((rule) => rule.pattern)).toEqual([
      '*',
      '*.env',
      '*.env.*',
      '*credentials*',
      '*secret*',
      '*.env.example',
      '*id_rsa*',
      '*id_ecdsa*',
      '*id_ed25519*',
      '*.pem',
      '*.key',
      '~/.ssh/*',
      '~/.aws/*',
      '~/.gnupg/*',
      '~/.config/gh/*',
      '~/.docker/config.json',
      '~/.kube/*',
      '~/.netrc',
      '~/.npmrc',
      '~/.pypirc',
      '~/.pgpass',
      '~/.vault-token',
      '~/.git-credentials',
      '~/.config/rclone/*',
      '~/.config/gcloud/*',
      '~/.azure/*',
      '~/.terraformrc',
      '~/.config/hub',
      '~/.my.cnf',
      '~/.s3cfg',
      '~/.boto',
      '~/.yarnrc.yml',
      '~/.config/pip/pip.conf',
      '~/.bash_history',
      '~/.zsh_history',
      '~/.zhistory',
      '~/*_history',
      '~/.local/share/fish/fish_history',
      '/etc/shadow',
      '/proc/*/environ',
      '~/.molf/*',
      '~/.config/molf/*',
      '~/.local/share/molf/*',
      '~/.local/state/molf/*',
    ]);
  });
});

describe("a subagent's permission", () => {
  it('becomes rules of the agent layer, in order', () => {
    const parsed = safeParseAgentRules({ '*': 'deny', read_file: { '*': 'allow', '*.env': 'deny' } }, 'reviewer');
    expect(parsed).toMatchObject({
      ok: true,
      rules: [
        { tool: '*', pattern: '*', action: 'deny', source: { layer: 'agent', agent: 'reviewer' } },
        { tool: 'read_file', pattern: '*', action: 'allow' },
        { tool: 'read_file', pattern: '*.env', action: 'deny' },
      ],
    });
  });

  it('is refused with a message naming what is wrong', () => {
    expect(safeParseAgentRules({ shell_exec: 'maybe' }, 'x')).toMatchObject({
      ok: false,
      message: expect.stringContaining('"shell_exec"'),
    });
    expect(safeParseAgentRules(['read_file'], 'x')).toMatchObject({
      ok: false,
      message: expect.stringContaining('one object'),
    });
  });
});

describe('safeParseRulePattern', () => {
  it('takes what the file takes and refuses what it refuses, saying why', () => {
    expect(safeParseRulePattern('npm run *')).toEqual({ ok: true, value: 'npm run *' });
    expect(safeParseRulePattern('')).toEqual({
      ok: false,
      message: 'a pattern cannot be empty (use "*" for everything)',
    });
    expect(safeParseRulePattern('x'.repeat(MAX_PATTERN_CHARS + 1))).toEqual({
      ok: false,
      message: `a pattern is longer than ${MAX_PATTERN_CHARS} characters`,
    });
  });
});

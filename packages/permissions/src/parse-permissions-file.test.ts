import { describe, expect, it } from 'vitest';
import { readDefaultPermissionsText } from './default-permissions-file.ts';
import { MAX_PATTERN_CHARS, safeParseAgentRules, safeParsePermissionsFile } from './parse-permissions-file.ts';

const ACTIONS = '"allow", "deny", "ask"';
const ONE_OBJECT = 'the file must hold one object such as { "*": "ask", "read_file": "allow" }';
const EMPTY = 'the file is empty: it must hold one object such as { "*": "ask" }';

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
    [
      'a number as an action',
      '{\n  "read_file": 1\n}',
      `"read_file" must be one of ${ACTIONS}, not the number 1`,
      2,
      16,
    ],
    ['null as an action', '{\n  "grep": null\n}', `"grep" must be one of ${ACTIONS}, not null`, 2, 11],
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
      `"read_file" → "*" must be one of ${ACTIONS}, not an object`,
      3,
      10,
    ],
    [
      'an array of actions',
      '{\n  "read_file": ["allow"]\n}',
      `"read_file" must be one of ${ACTIONS}, not an array`,
      2,
      16,
    ],
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
    ['a missing comma', '{\n  "read_file": "allow"\n  "grep": "allow"\n}', 'invalid JSONC: CommaExpected', 3, 3],
    ['a missing closing brace', '{\n  "read_file": "allow"\n', 'invalid JSONC: CloseBraceExpected', 3, 1],
    ['single-quoted keys', "{\n  'read_file': 'allow'\n}", 'invalid JSONC: InvalidSymbol', 2, 3],
    ['a second object', '{ "grep": "allow" }\n{ }', 'invalid JSONC: EndOfFileExpected', 2, 1],
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

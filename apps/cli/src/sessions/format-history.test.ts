import type { SessionMessage } from '@molf/protocol';
import { describe, expect, it } from 'vitest';
import { createTerminalStyle } from '../terminal/terminal-style.ts';
import { formatSessionHistory } from './format-history.ts';

const plain = createTerminalStyle(0);
const at = '2025-01-01T00:00:00.000Z';
const user = (text: string, extra: { cronJobId?: string } = {}): SessionMessage => ({
  id: `u-${text}`,
  at,
  role: 'user',
  text,
  ...extra,
});
const assistant = (
  text: string,
  calls: Array<[id: string, name: string, args: Record<string, unknown>]> = [],
  extra: { interrupted?: boolean } = {},
): SessionMessage => ({
  id: `a-${text}`,
  at,
  role: 'assistant',
  text,
  model: 'fake/m',
  toolCalls: calls.map(([toolCallId, toolName, args]) => ({ toolCallId, toolName, args })),
  ...extra,
});
const tool = (
  toolCallId: string,
  toolName: string,
  output: string,
  extra: Partial<Extract<SessionMessage, { role: 'tool' }>> = {},
): SessionMessage => ({ id: `t-${toolCallId}`, at, role: 'tool', toolCallId, toolName, output, ...extra });

describe('a session history as the terminal shows it', () => {
  it('prints prompts, answers and tool calls with their outcome and collapsed output', () => {
    const text = formatSessionHistory(
      [
        user('Why does the build fail?\nIt started today.'),
        assistant('Let me look.', [
          ['c1', 'shell_exec', { command: 'npm run build' }],
          ['c2', 'read_file', { path: 'package.json' }],
          ['c3', 'shell_exec', { command: 'rm -rf dist' }],
        ]),
        tool('c1', 'shell_exec', 'line 1\nline 2\nline 3\nline 4\nline 5\nline 6\n', {
          error: 'exit code 1',
          errorKind: 'failed',
        }),
        tool('c2', 'read_file', '{ "name": "app" }'),
        tool('c3', 'shell_exec', '', {
          error: 'Permission denied by rule "rm *": deny',
          errorKind: 'permission_denied',
        }),
        assistant('The build script is missing.'),
      ],
      plain,
    );
    expect(text).toBe(
      [
        '› Why does the build fail?',
        '  It started today.',
        '',
        'Let me look.',
        '',
        '✗ shell_exec npm run build',
        '    exit code 1',
        '    line 1',
        '    line 2',
        '    line 3',
        '    line 4',
        '    … 2 more lines',
        '✓ read_file package.json',
        '    { "name": "app" }',
        '⊘ shell_exec rm -rf dist (denied)',
        '    Permission denied by rule "rm *": deny',
        '',
        'The build script is missing.',
        '',
      ].join('\n'),
    );
  });

  it("shows an edit's diff instead of its output, a task's answer without its tag, summaries, cut answers, cron prompts and calls without a result", () => {
    const text = formatSessionHistory(
      [
        {
          id: 's1',
          at,
          role: 'summary',
          text: 'Goal: fix the build.\nProgress: found the script.',
          coversUntil: 'x',
          model: 'fake/m',
        },
        user('check the nightly build', { cronJobId: 'cj_1' }),
        assistant('', [
          ['e1', 'edit_file', { path: 'package.json', old_string: 'a', new_string: 'b' }],
          ['t1', 'task', { agent: 'explore', description: 'look', prompt: 'look around' }],
        ]),
        tool('e1', 'edit_file', 'Edited package.json', {
          diff: { diff: '--- a/package.json\n+++ b/package.json\n@@ -1 +1 @@\n-a\n+b', truncated: false },
        }),
        tool('t1', 'task', '<task_result agent="explore">\nnothing unusual\n</task_result>'),
        assistant('Half an ans', [['g1', 'glob', { pattern: '*.ts' }]], { interrupted: true }),
        user('go on'),
      ],
      plain,
    );
    expect(text).toBe(
      [
        '— earlier messages summarised —',
        '    Goal: fix the build.',
        '    Progress: found the script.',
        '',
        '› (cron) check the nightly build',
        '',
        '✓ edit_file package.json',
        '    --- a/package.json',
        '    +++ b/package.json',
        '    @@ -1 +1 @@',
        '    -a',
        '    … 1 more line',
        '✓ task explore',
        '    nothing unusual',
        '',
        'Half an ans',
        '(answer cut short)',
        '',
        '○ glob *.ts (no result)',
        '',
        '› go on',
        '',
      ].join('\n'),
    );
  });

  it('renders answers through the given renderer, collapses to the given number of lines, and prints nothing for no messages', () => {
    const messages = [
      user('hi'),
      assistant('**bold**', [['c', 'glob', { pattern: '*' }]]),
      tool('c', 'glob', 'a\nb\nc'),
    ];
    const text = formatSessionHistory(messages, plain, {
      renderAnswer: (answer) => `<${answer}>`,
      outputLines: 1,
    });
    expect(text).toBe(['› hi', '', '<**bold**>', '', '✓ glob *', '    a', '    … 2 more lines', ''].join('\n'));
    expect(formatSessionHistory([], plain)).toBe('');
  });

  it('colours roles and outcomes only when the style has colour', () => {
    const messages = [user('hi'), assistant('', [['c', 'glob', { pattern: '*' }]]), tool('c', 'glob', 'x')];
    // biome-ignore lint/suspicious/noControlCharactersInRegex: an ANSI escape is what is looked for
    const ansi = /\u001b\[/;
    expect(formatSessionHistory(messages, plain)).not.toMatch(ansi);
    expect(formatSessionHistory(messages, createTerminalStyle(1))).toMatch(ansi);
  });

  it("shows the escape sequences of a prompt, an answer, a call's arguments and a tool's output as text", () => {
    const messages = [
      user('hi\u001b]0;title\u0007'),
      assistant('see \u001b]52;c;eA==\u0007', [['c', 'shell_exec', { command: 'echo a\u001b[8mhidden' }]]),
      tool('c', 'shell_exec', 'out\u001b[2J'),
    ];
    const text = formatSessionHistory(messages, plain);
    expect(text).not.toContain('\u001b');
    expect(text).toContain('› hi\\x1b]0;title\\x07');
    expect(text).toContain('see \\x1b]52;c;eA==\\x07');
    expect(text).toContain('shell_exec echo a\\x1b[8mhidden');
    expect(text).toContain('out\\x1b[2J');
  });
});

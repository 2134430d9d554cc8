// The wrapper tables read by unwrapCommand, entry by entry, and what the unwrapper returns for a line
// of each kind of wrapper: the commands and command lines it hands on, in order, with the problems.
import { describe, expect, it } from 'vitest';
import type { InnerRun } from './inner-run.ts';
import type { ShellWord } from './shell-words.ts';
import { readsProgramFromStdin } from './stdin-programs.ts';
import { unwrapCommand } from './unwrap-command.ts';
import {
  FIND_EXEC_OPTIONS,
  GDB_OPTIONS_WITH_VALUE,
  GIT_RUNS_VALUE,
  INTERPRETERS,
  RUNNERS,
  type RunnerSpec,
  SHELLS,
  SUBCOMMAND_RUNNERS,
  TRANSPARENT_WRAPPERS,
  WRAPPER_OPTIONS_WITH_VALUE,
} from './wrapper-tables.ts';

/** Words as the analysis reads them: split at blanks, `'…'` kept whole, `$…` only known at run time. */
function toWords(line: string): ShellWord[] {
  return [...line.matchAll(/'([^']*)'|(\S+)/g)].map((match) => {
    const value = match[1] ?? (match[2] as string);
    return { value, isStatic: !value.startsWith('$'), hasGlob: false };
  });
}

/** A run as one readable line; words only known at run time in ‹›. */
function toText(run: InnerRun): string {
  switch (run.type) {
    case 'command': {
      const words = run.words.map((word) => (word.isStatic ? word.value : `‹${word.value}›`)).join(' ');
      const how = `${run.derived === true ? ' (derived)' : ''}${run.onlyDeny === true ? ' (only deny)' : ''}`;
      return `command via ${run.via}${how}: ${words}`;
    }
    case 'line':
      return `line via ${run.via}: ${run.source}`;
    case 'scan':
      return `scan: ${run.source}`;
    case 'problem':
      return `problem: ${run.problem}`;
  }
}

function unwrap(words: readonly (string | ShellWord)[] | string): string[] {
  const shellWords =
    typeof words === 'string'
      ? toWords(words)
      : words.map((word) => (typeof word === 'string' ? { value: word, isStatic: true, hasGlob: false } : word));
  return unwrapCommand(shellWords).map(toText);
}

const list = (options: string | undefined) => (options ?? '').split(' ').filter((option) => option !== '');
/** Placeholder operands for a runner's leading ones (`timeout 5`, `chroot DIR`). */
const leadingOf = (spec: RunnerSpec | undefined) => Array.from({ length: spec?.leading ?? 0 }, () => '1');
const RM = ['rm', '-rf', 'x'];
const LD_PRELOAD_PROBLEM =
  'it sets LD_PRELOAD, which can change what a program runs, loads or writes (only LANG, LANGUAGE, LC_*, TZ, NO_COLOR, FORCE_COLOR, CLICOLOR, CLICOLOR_FORCE, COLORTERM, TERM, COLUMNS, LINES, CI, NODE_ENV, RUST_BACKTRACE, RUST_LOG, PYTHONUNBUFFERED, PYTHONDONTWRITEBYTECODE, GIT_TERMINAL_PROMPT, DEBIAN_FRONTEND are known to be harmless)';

const runnerEntries = (table: Readonly<Record<string, RunnerSpec>>) =>
  Object.entries(table).map(([name, spec]) => ({ name, spec, prefix: name.split(' ') }));
const RUNNER_ENTRIES = [...runnerEntries(RUNNERS), ...runnerEntries(SUBCOMMAND_RUNNERS)];

describe('RUNNERS and SUBCOMMAND_RUNNERS', () => {
  it.each(
    RUNNER_ENTRIES.filter(({ spec }) => (spec.command ?? 'operands') === 'operands').map((entry) => [
      entry.name,
      entry,
    ]),
  )('%s runs the command after its options and leading operands', (_name, { name, spec, prefix }) => {
    const only = spec.judgedByRunner === true ? ' (only deny)' : '';
    expect(unwrap([...prefix, ...leadingOf(spec), ...RM])).toEqual([`command via ${name}${only}: rm -rf x`]);
  });

  it.each(
    RUNNER_ENTRIES.flatMap(({ name, spec, prefix }) =>
      list(spec.source).map((option) => [`${name} ${option}`, { name, prefix, option }] as const),
    ),
  )('%s runs its value as a command line', (_title, { name, prefix, option }) => {
    expect(unwrap([...prefix, option, 'rm -rf x'])).toContainEqual(`line via ${name} ${option}: rm -rf x`);
  });

  it.each(
    RUNNER_ENTRIES.flatMap(({ name, spec, prefix }) =>
      list(spec.values)
        .filter((option) => !list(spec.noCommand).includes(option) && !list(spec.source).includes(option))
        .map((option) => [`${name} ${option}`, { name, spec, prefix, option }] as const),
    ),
  )('%s takes a value that is no command', (_title, { spec, prefix, option }) => {
    const words = [...prefix, ...leadingOf(spec), ...RM];
    const plain = unwrap(words);
    expect(unwrap([...prefix, option, 'VALUE', ...words.slice(prefix.length)])).toEqual(plain);
  });

  it.each(
    RUNNER_ENTRIES.flatMap(({ name, spec, prefix }) =>
      list(spec.noCommand).map((option) => [`${name} ${option}`, { prefix, option }] as const),
    ),
  )('%s runs no command at all', (_title, { prefix, option }) => {
    expect(unwrap([...prefix, option, '1', ...RM]).filter((run) => run.startsWith('command'))).toEqual([]);
  });

  it.each(
    RUNNER_ENTRIES.flatMap(({ name, spec, prefix }) =>
      list(spec.environment).map((option) => [`${name} ${option}`, { name, prefix, option }] as const),
    ),
  )('%s sets a variable in the environment of the command, judged like an assignment', (_title, entry) => {
    expect(unwrap([...entry.prefix, entry.option, 'LD_PRELOAD=/x', ...RM])).toEqual([
      `problem: ${LD_PRELOAD_PROBLEM}`,
      `command via ${entry.name}: rm -rf x`,
    ]);
  });

  it('joins the words of a `joined` runner into one command line (watch)', () => {
    expect(unwrap('watch -n 1 rm -rf x')).toEqual(['line via watch: rm -rf x']);
  });

  it('judges the NAME=value words sudo passes before the command', () => {
    expect(unwrap('sudo -u bob LD_PRELOAD=/x rm -rf x')).toEqual([
      `problem: ${LD_PRELOAD_PROBLEM}`,
      'command via sudo: rm -rf x',
    ]);
  });

  it('finds the sub-command runner behind global options (npm --prefix . exec)', () => {
    expect(unwrap('npm --prefix . exec rm -rf x')).toEqual(['command via npm exec (only deny): rm -rf x']);
  });
});

describe('TRANSPARENT_WRAPPERS', () => {
  it.each([...TRANSPARENT_WRAPPERS].map((name) => [name]))('%s is a wrapper the unwrapper reads', (name) => {
    const spec = Object.hasOwn(RUNNERS, name) ? RUNNERS[name] : undefined;
    expect(unwrap([name, ...leadingOf(spec), ...RM])).toEqual([`command via ${name}: rm -rf x`]);
  });
});

describe('SHELLS and INTERPRETERS', () => {
  it.each([...SHELLS].filter((name) => name !== 'busybox').map((name) => [name]))(
    '%s -c runs its command line, and without one reads its program from its input',
    (name) => {
      expect(unwrap([name, '-c', 'rm -rf x'])).toEqual([`line via ${name} -c: rm -rf x`]);
      expect(readsProgramFromStdin(toWords(name))).toBe(true);
      expect(readsProgramFromStdin(toWords(`${name} script.sh`))).toBe(false);
    },
  );

  it('busybox runs the applet its next word names', () => {
    expect(unwrap('busybox rm -rf x')).toEqual(['command via busybox: rm -rf x']);
  });

  it.each([...INTERPRETERS].map((name) => [name]))(
    '%s reads its program from its input without a script or -c/-e',
    (name) => {
      expect(readsProgramFromStdin(toWords(`${name} -u`))).toBe(true);
      expect(readsProgramFromStdin(toWords(`${name} script`))).toBe(false);
      expect(readsProgramFromStdin(toWords(`${name} -c x`))).toBe(false);
      expect(unwrap([name, 'script'])).toEqual([]);
    },
  );
});

describe('the option tables of the wrappers read by rules of their own', () => {
  // Each line with the option and a value put in must give what it gives without them.
  const bases: Record<keyof typeof WRAPPER_OPTIONS_WITH_VALUE, { line: string; at: number }> = {
    env: { line: 'env rm -rf x', at: 1 },
    xargs: { line: 'xargs rm -rf x', at: 1 },
    parallel: { line: 'parallel rm ::: a', at: 1 },
    ssh: { line: 'ssh host rm x', at: 1 },
    su: { line: "su -c 'rm x'", at: 1 },
    runuser: { line: 'runuser -- rm x', at: 1 },
    flock: { line: 'flock /lock rm x', at: 1 },
    'git config': { line: "git config alias.x '!rm x'", at: 2 },
  };
  it.each(
    Object.entries(WRAPPER_OPTIONS_WITH_VALUE).flatMap(([name, options]) =>
      list(options).map((option) => [`${name} ${option}`, { name, option }] as const),
    ),
  )('%s takes a value that is no command', (_title, { name, option }) => {
    const base = bases[name as keyof typeof bases];
    const words = toWords(base.line);
    const withOption = [...words.slice(0, base.at), ...toWords(`${option} VALUE`), ...words.slice(base.at)];
    expect(unwrap(withOption)).toEqual(unwrap(words));
    expect(unwrap(words)).not.toEqual([]);
  });

  it.each([...GDB_OPTIONS_WITH_VALUE].map((option) => [`gdb -${option}`, option]))(
    '%s takes a value that is no command',
    (_title, option) => {
      expect(unwrap(['gdb', `-${option}`, 'VALUE', '-ex', 'shell rm x'])).toEqual(['line via gdb shell: rm x']);
    },
  );

  it.each(
    Object.entries(GIT_RUNS_VALUE).flatMap(([sub, options]) =>
      list(options).map((option) => [`git ${sub} ${option}`, { sub, option }] as const),
    ),
  )('%s runs its value as a command line', (_title, { sub, option }) => {
    expect(unwrap(['git', sub, option, 'rm -rf x'])).toEqual([`line via git ${sub} ${option}: rm -rf x`]);
  });

  it.each(
    Object.entries(FIND_EXEC_OPTIONS).flatMap(([name, options]) =>
      options.map((option) => [`${name} ${option}`, { name, option }] as const),
    ),
  )('%s runs a command for every file found', (_title, { name, option }) => {
    expect(unwrap([name, '.', option, 'rm', '{}', ';'])).toEqual([`command via ${name} ${option}: rm ‹{}›`]);
  });
});

describe('what the unwrapper returns for a line of each kind of wrapper', () => {
  it.each<[string, string, string[]]>([
    ['a shell with -c', "bash -lc 'rm -rf x'", ['line via bash -c: rm -rf x']],
    ['a shell whose -c has nothing', 'sh -c', ['problem: sh -c has no command']],
    [
      'a shell given a run-time command line',
      'bash -c $CMD',
      ['problem: bash -c runs a command that is only known when the line runs: $CMD'],
    ],
    ['a shell running a script', 'bash deploy.sh', []],
    ['a wrapper with a leading operand', 'timeout 5 rm -rf x', ['command via timeout: rm -rf x']],
    ['wrappers inside wrappers, one level at a time', 'nice taskset 1 rm x', ['command via nice: taskset 1 rm x']],
    [
      'env with an assignment and an option with a value',
      'env -u HOME LD_PRELOAD=/x rm -rf x',
      [`problem: ${LD_PRELOAD_PROBLEM}`, 'command via env: rm -rf x'],
    ],
    ['env -S splitting a command line', "env -S 'rm -rf x'", ['line via env -S: rm -rf x']],
    [
      'xargs with a placeholder (the file names are known only at run time)',
      'xargs -I {} cat {}',
      ['command via xargs: cat ‹{}›', 'problem: xargs gives cat file names only known when the line runs'],
    ],
    ['xargs without a command (echo)', 'xargs -n 1', []],
    ['find -exec', 'find . -name x -exec rm {} ;', ['command via find -exec: rm ‹{}›']],
    [
      'find -delete, as the rm it amounts to',
      'find build -delete',
      ['command via find -delete (derived): rm -rf build'],
    ],
    ['fd -x with the command attached', 'fd -xrm', ['command via fd -xrm: rm']],
    ['ssh: the rest is a line for the remote shell', 'ssh host rm -rf x', ['line via ssh: rm -rf x']],
    ['ssh -o ProxyCommand', "ssh -o 'ProxyCommand=nc x 22' host", ['line via ssh -o ProxyCommand: nc x 22']],
    ['scp -S', 'scp -S ./prog a b:', ['command via scp -S: ./prog', 'line via scp -S: ./prog']],
    ['su -c', "su -c 'rm x' bob", ['line via su -c: rm x']],
    ['runuser after --', 'runuser -u bob -- rm x', ['command via runuser: rm x']],
    ['coproc', 'coproc rm -rf x', ['command via coproc: rm -rf x']],
    ['parallel with its arguments', 'parallel rm ::: a b', ['line via parallel: rm a b']],
    [
      'parallel with command lines as arguments',
      "parallel ::: 'rm a' ls",
      ['line via parallel: rm a', 'line via parallel: ls'],
    ],
    ['gdb --args', 'gdb --args rm x', ['command via gdb --args: rm x']],
    ['a gdb shell command', "gdb -batch -ex 'shell rm x'", ['line via gdb shell: rm x']],
    ['gdb -ex run PROGRAM', 'gdb -ex run ./prog', ['command via gdb run: ./prog']],
    ['sg GROUP -c', "sg wheel -c 'rm x'", ['line via sg: rm x']],
    ['flock FILE CMD', 'flock /lock rm x', ['command via flock: rm x']],
    ['flock FILE -c', "flock /lock -c 'rm x'", ['line via flock -c: rm x']],
    [
      'git -c with a command key',
      "git -c 'core.pager=rm x' log",
      ['problem: git -c sets core.pager, a command git runs', 'line via git -c core.pager: rm x'],
    ],
    [
      'git -c with a key naming code',
      'git -c core.hooksPath=/t log',
      ['problem: git -c sets core.hooksPath, which points git at code it runs'],
    ],
    ['git bisect run', 'git bisect run rm x', ['command via git bisect run: rm x']],
    ['git submodule foreach', 'git submodule foreach --recursive rm x', ['line via git submodule foreach: rm x']],
    ['git grep -O', 'git grep -Orm x', ['line via git grep -O: rm']],
    ['a git sub-command named like an object property', 'git constructor', []],
    ['eval --', "eval -- 'rm -rf x'", ['line via eval: rm -rf x']],
    ['trap with a signal', "trap 'rm x' EXIT", ['line via trap: rm x']],
    ['trap resetting a signal', 'trap - INT', []],
    ['command', 'command rm x', ['command via command: rm x']],
    ['command -v, a look-up', 'command -v rm', []],
    ['npx, whose own rules decide', 'npx rm -rf x', ['command via npx (only deny): rm -rf x']],
    [
      'tar --checkpoint-action=exec=',
      "tar '--checkpoint-action=exec=rm x' -cf a.tar .",
      ['line via tar --checkpoint-action: rm x'],
    ],
    ['a program that runs nothing', 'ls -la', []],
  ])('%s: %s', (_kind, line, expected) => {
    expect(unwrap(line)).toEqual(expected);
  });
});

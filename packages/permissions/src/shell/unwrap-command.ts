import { optionSet, optionWidth, readOptions } from './command-options.ts';
import { FILE_COMMANDS } from './file-arguments.ts';
import { withoutGlobalOptions } from './global-options.ts';
import type { InnerRun } from './inner-run.ts';
import { programName } from './program-name.ts';
import { type ShellWord, staticWord } from './shell-words.ts';
import { judgeAssignment } from './variable-assignments.ts';
import {
  FIND_EXEC_OPTIONS,
  GDB_COMMAND_OPTIONS,
  GDB_OPTIONS_WITH_VALUE,
  GIT_CODE_PATH_KEY,
  GIT_COMMAND_KEY,
  GIT_GLOBAL_OPTIONS,
  GIT_RUNS_VALUE,
  RUNNERS,
  type RunnerSpec,
  SHELL_OPTIONS_WITH_VALUE,
  SHELLS,
  SSH_COMMAND_OPTION,
  SUBCOMMAND_RUNNERS,
  WRAPPER_OPTIONS_WITH_VALUE,
} from './wrapper-tables.ts';

const ASSIGNMENT = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s;

/** What one command hands on, in the order it was found (the order the analyser follows it in). */
type Found = InnerRun[];

function addProblem(found: Found, problem: string): void {
  found.push({ type: 'problem', problem });
}

/** A command the wrapper runs with these words. */
function addCommand(
  found: Found,
  via: string,
  inner: readonly ShellWord[],
  how: { derived?: boolean; onlyDeny?: boolean } = {},
): void {
  if (inner.length === 0) return;
  found.push({
    type: 'command',
    words: [...inner],
    via,
    ...(how.derived === true ? { derived: true as const } : {}),
    ...(how.onlyDeny === true ? { onlyDeny: true as const } : {}),
  });
}

/** A command line the wrapper hands to a shell (`bash -c '…'`, `script -c '…'`). */
function addLine(found: Found, via: string, payload: ShellWord): void {
  if (!payload.isStatic) {
    addProblem(found, `${via} runs a command that is only known when the line runs: ${payload.value}`);
    return;
  }
  found.push({ type: 'line', source: payload.value, via });
}

/** Words a wrapper joins with spaces and hands to a shell (`watch`, `ssh host …`, `sg group …`). */
function joined(words: readonly ShellWord[]): ShellWord {
  const dynamicPart = words.find((word) => !word.isStatic);
  return dynamicPart ?? staticWord(words.map((word) => word.value).join(' '));
}

/** `NAME=value` words a wrapper passes in the environment of the command (`env`, `sudo`). */
function judgeEnvironmentWord(found: Found, word: ShellWord): boolean {
  const match = word.isStatic ? ASSIGNMENT.exec(word.value) : null;
  if (match === null) return false;
  const problem = judgeAssignment({
    name: match[1] as string,
    value: match[2] as string,
    hasValue: true,
    reach: 'environment',
  });
  if (problem !== undefined) addProblem(found, problem);
  return true;
}

function reportUnknown(found: Found, wrapper: string): void {
  addProblem(found, `the command run by ${wrapper} cannot be told apart from its options`);
}

/** A runner of the table: its source options, then the command after its options and leading operands. */
function unwrapRunner(found: Found, name: string, words: readonly ShellWord[], spec: RunnerSpec): void {
  const source = optionSet(spec.source);
  const noCommand = optionSet(spec.noCommand);
  const mode = spec.command ?? 'operands';
  const withValue = new Set([...optionSet(spec.values), ...source, ...optionSet(spec.environment)]);
  const read = readOptions(words, { start: 1, withValue, stopAtOperand: mode !== 'none' });
  for (const option of read.options) {
    if (!source.has(option.name)) continue;
    if (option.value === undefined) reportUnknown(found, name);
    else addLine(found, `${name} ${option.name}`, option.value);
  }
  for (const option of read.options) {
    if (optionSet(spec.environment).has(option.name) && option.value !== undefined)
      judgeEnvironmentWord(found, option.value);
  }
  if (name === 'tar') {
    // `--checkpoint-action=exec=CMD` runs CMD at each checkpoint.
    for (const option of read.options) {
      const action = option.name === '--checkpoint-action' ? option.value : undefined;
      if (action?.isStatic === true && action.value.startsWith('exec=')) {
        addLine(found, 'tar --checkpoint-action', staticWord(action.value.slice('exec='.length)));
      }
    }
  }
  if (mode === 'none' || read.options.some((option) => noCommand.has(option.name))) return;
  let rest = read.operands;
  if (spec.assignments === true) {
    while (rest[0] !== undefined && judgeEnvironmentWord(found, rest[0])) rest = rest.slice(1);
  }
  if (spec.leading !== undefined) {
    // Options may follow the leading operands too (`setarch i386 --3gb CMD`).
    rest = readOptions([staticWord(name), ...rest.slice(spec.leading)], {
      start: 1,
      withValue,
      stopAtOperand: true,
    }).operands;
  }
  if (mode === 'joined') {
    if (rest.length > 0) addLine(found, name, joined(rest));
  } else {
    addCommand(found, name, rest, { onlyDeny: spec.judgedByRunner === true });
  }
}

function unwrapShell(found: Found, name: string, words: readonly ShellWord[]): void {
  let index = 1;
  let runsString = false;
  if (name === 'busybox') {
    // `busybox sh -c …` runs the applet named by the next word.
    addCommand(found, 'busybox', words.slice(1));
    return;
  }
  while (index < words.length) {
    const word = words[index] as ShellWord;
    if (!word.isStatic) break;
    const value = word.value;
    if (value === '--' || value === '-') {
      index += 1;
      break;
    }
    if (SHELL_OPTIONS_WITH_VALUE.has(value)) {
      index += 2;
      continue;
    }
    if (/^[-+][A-Za-z]+$/.test(value)) {
      if (value.startsWith('-') && value.includes('c')) runsString = true;
      index += 1;
      continue;
    }
    if (value.startsWith('--')) {
      if (value === '--command') runsString = true;
      index += 1;
      continue;
    }
    break;
  }
  if (runsString) {
    const payload = words[index];
    if (payload === undefined) {
      addProblem(found, `${name} -c has no command`);
      return;
    }
    addLine(found, `${name} -c`, payload);
  }
}

function unwrapEnv(found: Found, words: readonly ShellWord[]): void {
  // Only env's own options (before the command) count: `env ls -S x` runs `ls -S x`.
  const withValue = optionSet(WRAPPER_OPTIONS_WITH_VALUE.env);
  let index = 1;
  while (index < words.length) {
    const word = words[index] as ShellWord;
    const value = word.value;
    if (!word.isStatic) break;
    if (value === '--') {
      index += 1;
      break;
    }
    // A lone `-` is `-i`.
    if (value === '-' || judgeEnvironmentWord(found, word)) {
      index += 1;
      continue;
    }
    if (!value.startsWith('-')) break;
    const split = readOptions(words.slice(0, index + 2), {
      start: index,
      withValue: new Set([...withValue, '-S', '--split-string']),
      stopAtOperand: true,
    }).options.find((option) => option.name === '-S' || option.name === '--split-string');
    if (split !== undefined) {
      if (split.value === undefined) reportUnknown(found, 'env');
      else addLine(found, 'env -S', split.value);
      return;
    }
    index += optionWidth(value, withValue);
  }
  addCommand(found, 'env', words.slice(index));
}

function unwrapXargs(found: Found, words: readonly ShellWord[]): void {
  const withValue = optionSet(WRAPPER_OPTIONS_WITH_VALUE.xargs);
  const read = readOptions(words, { start: 1, withValue, stopAtOperand: true });
  const replace = read.options.find(
    (option) => option.name === '-I' || option.name === '--replace' || option.name === '-i',
  );
  const placeholder = replace?.value?.value ?? (replace === undefined ? undefined : '{}');
  // The words xargs adds (or puts where -I's placeholder is) are only known when the line runs.
  const inner = read.operands.map((word) =>
    placeholder !== undefined && word.value.includes(placeholder) ? { ...word, isStatic: false } : word,
  );
  // Without a command xargs runs echo, which is harmless.
  addCommand(found, 'xargs', inner);
  const program = programName(inner[0]?.value ?? '');
  if (inner[0]?.isStatic === true && Object.hasOwn(FILE_COMMANDS, program)) {
    addProblem(found, `xargs gives ${program} file names only known when the line runs`);
  }
}

/** `find … -exec CMD {} ;` and `fd -x CMD`; `find … -delete` removes files as `rm -rf` would. */
function unwrapFind(found: Found, name: 'find' | 'fd', words: readonly ShellWord[]): void {
  const execFlags = FIND_EXEC_OPTIONS[name];
  for (let index = 1; index < words.length; index += 1) {
    const flag = words[index] as ShellWord;
    // fd takes the command's first word attached too: `--exec=rm`, `-xrm`.
    const attached = name === 'find' ? null : /^(?:--exec(?:-batch)?=|-[xX])(.+)$/s.exec(flag.value);
    if (!execFlags.includes(flag.value) && attached === null) continue;
    let end = index + 1;
    while (end < words.length && ![';', '+', '\\;'].includes((words[end] as ShellWord).value)) end += 1;
    const first = attached === null ? [] : [{ ...flag, value: attached[1] as string }];
    // `{}` stands for each file found: only known when the line runs.
    const inner = [...first, ...words.slice(index + 1, end)].map((word) =>
      word.value.includes('{}') ? { ...word, isStatic: false } : word,
    );
    addCommand(found, `${name} ${(words[index] as ShellWord).value}`, inner);
    index = end;
  }
  if (name === 'find' && words.some((word) => word.value === '-delete')) {
    // The starting points come before the first test; find's own options (-H -L -P -D x -O3) first.
    let index = 1;
    while (index < words.length && /^-([HLP]|O\d*|D)$/.test((words[index] as ShellWord).value)) {
      index += (words[index] as ShellWord).value === '-D' ? 2 : 1;
    }
    const starts: ShellWord[] = [];
    while (index < words.length && !/^[-(!),]/.test((words[index] as ShellWord).value)) {
      starts.push(words[index] as ShellWord);
      index += 1;
    }
    const removed = starts.length > 0 ? starts : [staticWord('.')];
    addCommand(found, 'find -delete', [staticWord('rm'), staticWord('-rf'), ...removed], { derived: true });
  }
}

function unwrapSsh(found: Found, name: 'ssh' | 'scp', words: readonly ShellWord[]): void {
  const read = readOptions(words, {
    start: 1,
    withValue: optionSet(WRAPPER_OPTIONS_WITH_VALUE.ssh),
    stopAtOperand: name === 'ssh',
  });
  for (const option of read.options) {
    const match =
      option.name === '-o' && option.value?.isStatic === true ? SSH_COMMAND_OPTION.exec(option.value.value) : null;
    if (match !== null) addLine(found, `${name} -o ${match[1]}`, staticWord(match[2] as string));
  }
  if (name === 'scp') {
    const program = read.options.find((option) => option.name === '-S');
    if (program?.value !== undefined) addCommand(found, 'scp -S', [program.value]);
    return;
  }
  // The first operand is the host; the rest is a command line for the remote shell.
  const rest = read.operands.slice(1);
  if (rest.length > 0) addLine(found, 'ssh', joined(rest));
}

function unwrapSuOrRunuser(found: Found, name: 'su' | 'runuser', words: readonly ShellWord[]): void {
  const withValue = optionSet(WRAPPER_OPTIONS_WITH_VALUE[name]);
  // Options end at `--` (runuser's command follows it).
  const end = words.findIndex((word) => word.value === '--');
  const read = readOptions(end === -1 ? words : words.slice(0, end), {
    start: 1,
    withValue: new Set([...withValue, '-c', '--command', '--session-command']),
    stopAtOperand: false,
  });
  const command = read.options.find((option) => ['-c', '--command', '--session-command'].includes(option.name));
  if (command !== undefined) {
    if (command.value === undefined) reportUnknown(found, name);
    else addLine(found, `${name} -c`, command.value);
    return;
  }
  if (name === 'runuser' && end !== -1) addCommand(found, name, words.slice(end + 1));
}

/** `coproc CMD`, `coproc NAME { …; }`: the parser reads the group's words as arguments. */
function unwrapCoproc(found: Found, words: readonly ShellWord[]): void {
  const groupAt = words.findIndex((word, index) => index <= 2 && (word.value === '{' || word.value === '('));
  addCommand(found, 'coproc', words.slice(groupAt === -1 ? 1 : groupAt + 1));
}

/** `parallel [options] CMD ::: args`, `parallel 'cmd {}' ::: a`, `parallel ::: 'cmd1' 'cmd2'`. */
function unwrapParallel(found: Found, words: readonly ShellWord[]): void {
  const withValue = optionSet(WRAPPER_OPTIONS_WITH_VALUE.parallel);
  const read = readOptions(words, { start: 1, withValue, stopAtOperand: true });
  const separator = read.operands.findIndex((word) => /^:{3,4}\+?$/.test(word.value));
  const template = separator === -1 ? read.operands : read.operands.slice(0, separator);
  if (template.length > 0) {
    // parallel hands the command with its arguments (appended, as without `{}`) to a shell.
    const args =
      separator === -1 ? [] : read.operands.slice(separator + 1).filter((word) => !/^:{3,4}\+?$/.test(word.value));
    addLine(found, 'parallel', joined([...template, ...args]));
    return;
  }
  // Without a command, every argument is a command line of its own.
  for (const word of read.operands.slice(separator + 1)) {
    if (!/^:{3,4}\+?$/.test(word.value)) addLine(found, 'parallel', word);
  }
}

/** `gdb --args CMD…`, and gdb's own `shell CMD` / `!CMD` commands given with `-ex`. */
function unwrapGdb(found: Found, words: readonly ShellWord[]): void {
  const operands: ShellWord[] = [];
  let runs = false;
  for (let index = 1; index < words.length; index += 1) {
    const word = words[index] as ShellWord;
    const option = word.isStatic && word.value.startsWith('-') ? word.value.replace(/^--?/, '') : undefined;
    if (option === 'args') {
      addCommand(found, 'gdb --args', words.slice(index + 1));
      return;
    }
    if (option === undefined) {
      operands.push(word);
      continue;
    }
    const [name, attached] = option.includes('=')
      ? [option.slice(0, option.indexOf('=')), option.slice(option.indexOf('=') + 1)]
      : [option, undefined];
    if (!GDB_OPTIONS_WITH_VALUE.has(name)) continue;
    let value: ShellWord | undefined = { ...word, value: attached ?? '' };
    if (attached === undefined) {
      index += 1;
      value = words[index];
    }
    if (!GDB_COMMAND_OPTIONS.has(name) || value === undefined) continue;
    if (!value.isStatic) {
      addProblem(found, 'gdb runs commands only known when the line runs');
      continue;
    }
    const shellCommand = /^\s*(?:shell\s+|!)(.*)$/s.exec(value.value);
    if (shellCommand !== null) addLine(found, 'gdb shell', staticWord(shellCommand[1] as string));
    else if (/^\s*(run|r|start|starti)\b/.test(value.value)) runs = true;
  }
  // `gdb -ex run PROGRAM` runs the program it loaded.
  if (runs && operands[0] !== undefined) addCommand(found, 'gdb run', [operands[0]]);
}

/** `sg [-] GROUP [-c] COMMAND`: the command is a line for /bin/sh. */
function unwrapSg(found: Found, words: readonly ShellWord[]): void {
  let index = 1;
  if (words[index]?.value === '-') index += 1;
  index += 1;
  if (words[index]?.value === '-c') index += 1;
  const rest = words.slice(index);
  if (rest.length > 0) addLine(found, 'sg', joined(rest));
}

/** `flock [options] FILE CMD…` or `flock [options] FILE -c 'CMD'`. */
function unwrapFlock(found: Found, words: readonly ShellWord[]): void {
  const read = readOptions(words, {
    start: 1,
    withValue: optionSet(WRAPPER_OPTIONS_WITH_VALUE.flock),
    stopAtOperand: true,
  });
  const rest = read.operands.slice(1);
  if (rest[0]?.value === '-c' || rest[0]?.value === '--command') {
    if (rest[1] !== undefined) addLine(found, 'flock -c', rest[1]);
  } else {
    addCommand(found, 'flock', rest);
  }
}

/** A `git -c key=value` (or `git config key value`) setting: a command git may run, or code it loads. */
function judgeGitSetting(found: Found, setting: string, where: string): void {
  const equals = setting.indexOf('=');
  const key = equals === -1 ? setting : setting.slice(0, equals);
  const value = equals === -1 ? '' : setting.slice(equals + 1);
  if (GIT_CODE_PATH_KEY.test(key)) {
    addProblem(found, `${where} sets ${key}, which points git at code it runs`);
  } else if (GIT_COMMAND_KEY.test(key)) {
    addProblem(found, `${where} sets ${key}, a command git runs`);
    if (value !== '') addLine(found, `${where} ${key}`, staticWord(value.replace(/^!/, '')));
  }
}

function unwrapGit(found: Found, words: readonly ShellWord[]): void {
  const global = readOptions(words, { start: 1, withValue: optionSet(GIT_GLOBAL_OPTIONS), stopAtOperand: true });
  for (const option of global.options) {
    if (option.name === '-c' && option.value?.isStatic === true) judgeGitSetting(found, option.value.value, 'git -c');
    else if (option.name === '-c' || option.name === '--config-env') {
      addProblem(found, `git ${option.name} sets configuration only known when the line runs`);
    } else if (['--git-dir', '--work-tree', '--exec-path'].includes(option.name)) {
      addProblem(found, `git ${option.name} points git at another repository or other programs`);
    }
  }
  // `ext::CMD` URLs make git run CMD (when protocol.ext.allow lets it).
  if (words.some((word) => /^ext::/i.test(word.value))) {
    addProblem(found, 'git runs the command of an ext:: URL');
  }
  const [sub, ...rest] = global.operands;
  if (sub === undefined) return;
  if (sub.value === 'grep') {
    // `git grep -O<cmd>` opens the files it finds with that command (the value is attached only).
    for (const word of rest) {
      const pager = /^(?:-O|--open-files-in-pager=)(.+)$/s.exec(word.value)?.[1];
      if (pager !== undefined) addLine(found, 'git grep -O', { ...word, value: pager });
    }
  }
  switch (sub.value) {
    case 'bisect':
      if (rest[0]?.value === 'run') addCommand(found, 'git bisect run', rest.slice(1));
      return;
    case 'submodule': {
      const foreach = rest.findIndex((word) => word.value === 'foreach');
      if (foreach === -1) break;
      const command = rest.slice(foreach + 1).filter((word) => !/^(--recursive|-q|--quiet)$/.test(word.value));
      if (command.length > 0) addLine(found, 'git submodule foreach', joined(command));
      return;
    }
    case 'config': {
      const read = readOptions(rest, {
        start: 0,
        withValue: optionSet(WRAPPER_OPTIONS_WITH_VALUE['git config']),
        stopAtOperand: false,
      });
      // git ≥ 2.46 also spells it `git config set [--append] KEY VALUE`.
      const operands = ['set', 'add'].includes(read.operands[0]?.value ?? '') ? read.operands.slice(1) : read.operands;
      const [key, value] = operands;
      if (key?.isStatic === true && value !== undefined) {
        judgeGitSetting(found, `${key.value}=${value.isStatic ? value.value : ''}`, 'git config');
        if (!value.isStatic && (GIT_COMMAND_KEY.test(key.value) || GIT_CODE_PATH_KEY.test(key.value))) {
          addProblem(found, `git config sets ${key.value} to a value only known when the line runs`);
        }
      }
      return;
    }
    default:
      break;
  }
  const runs = optionSet(Object.hasOwn(GIT_RUNS_VALUE, sub.value) ? GIT_RUNS_VALUE[sub.value] : undefined);
  const read = readOptions(rest, {
    start: 0,
    withValue: new Set([...runs, ...(sub.value === 'clone' ? ['-c', '--config', '--template'] : ['--template'])]),
    stopAtOperand: false,
  });
  for (const option of read.options) {
    if (runs.has(option.name)) {
      if (option.value !== undefined) addLine(found, `git ${sub.value} ${option.name}`, option.value);
    } else if ((option.name === '-c' || option.name === '--config') && option.value?.isStatic === true) {
      judgeGitSetting(found, option.value.value, 'git clone -c');
    } else if (option.name === '--template') {
      addProblem(found, `git ${sub.value} --template copies hooks that git then runs`);
    }
  }
}

function unwrapEval(found: Found, words: readonly ShellWord[]): void {
  // `eval -- 'cmd'`: eval takes no options, but bash accepts and drops a leading `--`.
  const parts = words.slice(words[1]?.value === '--' ? 2 : 1);
  if (parts.length === 0) return;
  addLine(found, 'eval', joined(parts));
}

function unwrapTrap(found: Found, words: readonly ShellWord[]): void {
  // `trap 'cmd' EXIT` runs cmd later; `trap - INT` and `trap INT` only reset.
  const read = readOptions(words, { start: 1, withValue: new Set(), stopAtOperand: true });
  const action = read.operands[0];
  if (action !== undefined && read.operands.length >= 2 && action.value !== '-') {
    addLine(found, 'trap', action);
  }
}

function unwrapCommandBuiltin(found: Found, words: readonly ShellWord[]): void {
  const read = readOptions(words, { start: 1, withValue: new Set(), stopAtOperand: true });
  // `command -v x` only looks a name up (a `-v` after the name belongs to the command).
  if (read.options.some((option) => option.name === '-v' || option.name === '-V')) return;
  addCommand(found, 'command', read.operands);
}

/** Runners whose command is found by a rule of their own. */
const SPECIAL_RUNNERS: Readonly<Record<string, (found: Found, name: string, words: readonly ShellWord[]) => void>> = {
  eval: (found, _name, words) => unwrapEval(found, words),
  env: (found, _name, words) => unwrapEnv(found, words),
  command: (found, _name, words) => unwrapCommandBuiltin(found, words),
  trap: (found, _name, words) => unwrapTrap(found, words),
  xargs: (found, _name, words) => unwrapXargs(found, words),
  find: (found, _name, words) => unwrapFind(found, 'find', words),
  fd: (found, _name, words) => unwrapFind(found, 'fd', words),
  ssh: (found, _name, words) => unwrapSsh(found, 'ssh', words),
  sftp: (found, _name, words) => unwrapSsh(found, 'scp', words),
  scp: (found, _name, words) => {
    unwrapSsh(found, 'scp', words);
    unwrapRunner(found, 'scp', words, RUNNERS.scp as RunnerSpec);
  },
  su: (found, _name, words) => unwrapSuOrRunuser(found, 'su', words),
  runuser: (found, _name, words) => unwrapSuOrRunuser(found, 'runuser', words),
  coproc: (found, _name, words) => unwrapCoproc(found, words),
  parallel: (found, _name, words) => unwrapParallel(found, words),
  sem: (found, _name, words) => unwrapParallel(found, words),
  gdb: (found, _name, words) => unwrapGdb(found, words),
  sg: (found, _name, words) => unwrapSg(found, words),
  flock: (found, _name, words) => unwrapFlock(found, words),
  git: (found, _name, words) => unwrapGit(found, words),
};

/**
 * What a command runs in turn when it is a shell (`bash -c`), a wrapper (`sudo`, `env`, `xargs`,
 * `find -exec`…), `eval`, or a program with an option that runs a command (`git -c core.pager=…`,
 * `tar --to-command`): the commands and command lines it hands on and the problems found on the way,
 * in order. Pure: the analyser follows what it returns (see `InnerRun`); an empty list means the
 * command runs nothing Molf knows of.
 */
export function unwrapCommand(words: readonly ShellWord[]): InnerRun[] {
  const name = programName((words[0] as ShellWord).value);
  const found: Found = [];
  // `npm -y exec CMD`, `uv -q run CMD`: global options may stand before the sub-command.
  const bare = withoutGlobalOptions(words, name) ?? words;
  const subcommand = SUBCOMMAND_RUNNERS[`${name} ${bare[1]?.value ?? ''}`];
  if (SHELLS.has(name)) {
    unwrapShell(found, name, words);
  } else if (subcommand !== undefined) {
    unwrapRunner(found, `${name} ${bare[1]?.value}`, bare.slice(1), subcommand);
  } else if (Object.hasOwn(SPECIAL_RUNNERS, name)) {
    (SPECIAL_RUNNERS[name] as (typeof SPECIAL_RUNNERS)[string])(found, name, words);
  } else if (Object.hasOwn(RUNNERS, name)) {
    unwrapRunner(found, name, words, RUNNERS[name] as RunnerSpec);
  }
  return found;
}

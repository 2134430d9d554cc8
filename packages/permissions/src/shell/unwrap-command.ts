import { type AnalysisState, addProblem as addAnalysisProblem } from './analysis-state.ts';
import { optionSet, optionWidth, readOptions } from './command-options.ts';
import {
  GIT_CODE_PATH_KEY,
  GIT_COMMAND_KEY,
  GIT_GLOBAL_OPTIONS,
  RUNNERS,
  type RunnerSpec,
  SUBCOMMAND_RUNNERS,
} from './command-runners.ts';
import { FILE_COMMANDS } from './file-arguments.ts';
import { withoutGlobalOptions } from './global-options.ts';
import { type ShellWord, staticWord } from './shell-words.ts';
import { judgeAssignment } from './variable-assignments.ts';

const SHELLS = new Set(['bash', 'sh', 'zsh', 'dash', 'ksh', 'mksh', 'fish', 'ash', 'yash', 'busybox']);
const SHELL_OPTIONS_WITH_VALUE = new Set(['-o', '+o', '-O', '+O', '--rcfile', '--init-file']);
const INTERPRETERS = new Set([
  'python',
  'python2',
  'python3',
  'pypy',
  'pypy3',
  'node',
  'nodejs',
  'perl',
  'ruby',
  'php',
  'lua',
  'luajit',
  'Rscript',
  'tclsh',
  'osascript',
  'pwsh',
  'powershell',
  'irb',
  'ipython',
]);
const SSH_OPTIONS_WITH_VALUE = optionSet('-b -c -D -E -e -F -I -i -J -L -l -m -O -o -p -Q -R -S -W -w -B');
/** `ssh -o Name=value` options whose value is a command ssh runs locally. */
const SSH_COMMAND_OPTION = /^\s*(ProxyCommand|LocalCommand|KnownHostsCommand|RemoteCommand)\s*[=\s]\s*(.*)$/is;
const ASSIGNMENT = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s;

export function basename(path: string): string {
  const slash = path.lastIndexOf('/');
  return slash === -1 ? path : path.slice(slash + 1);
}

type Unwrap = {
  state: AnalysisState;
  via: string[];
  nesting: number;
  /** Set when only a deny of what the command runs counts (see `RunnerSpec.judgedByRunner`). */
  onlyDeny: boolean;
};

function nestedTooDeep(options: Unwrap): boolean {
  if (options.nesting + 1 <= options.state.limits.maxNesting) return false;
  addAnalysisProblem(options.state, `commands are wrapped more than ${options.state.limits.maxNesting} levels deep`);
  return true;
}

/** Records the command a wrapper runs, and what that command runs in turn. */
function descend(
  options: Unwrap,
  wrapper: string,
  inner: readonly ShellWord[],
  how: { derived?: boolean; onlyDeny?: boolean } = {},
): void {
  const { state, nesting } = options;
  if (inner.length === 0 || nestedTooDeep(options)) return;
  state.record({
    words: [...inner],
    via: [...options.via, wrapper],
    nesting: nesting + 1,
    derived: how.derived === true,
    onlyDeny: options.onlyDeny || how.onlyDeny === true,
  });
}

/** Analyzes a command line a wrapper hands to a shell (`bash -c '…'`, `script -c '…'`). */
function descendIntoSource(options: Unwrap, wrapper: string, payload: ShellWord): void {
  const { state, nesting } = options;
  if (!payload.isStatic) {
    addAnalysisProblem(state, `${wrapper} runs a command that is only known when the line runs: ${payload.value}`);
    return;
  }
  if (nestedTooDeep(options)) return;
  state.analyze({ source: payload.value, via: [...options.via, wrapper], nesting: nesting + 1 });
}

/** Words a wrapper joins with spaces and hands to a shell (`watch`, `ssh host …`, `sg group …`). */
function joined(words: readonly ShellWord[]): ShellWord {
  const dynamicPart = words.find((word) => !word.isStatic);
  return dynamicPart ?? staticWord(words.map((word) => word.value).join(' '));
}

/** `NAME=value` words a wrapper passes in the environment of the command (`env`, `sudo`). */
function judgeEnvironmentWord(options: Unwrap, word: ShellWord): boolean {
  const match = word.isStatic ? ASSIGNMENT.exec(word.value) : null;
  if (match === null) return false;
  const problem = judgeAssignment({
    name: match[1] as string,
    value: match[2] as string,
    hasValue: true,
    reach: 'environment',
  });
  if (problem !== undefined) addAnalysisProblem(options.state, problem);
  return true;
}

function reportUnknown(options: Unwrap, wrapper: string): void {
  addAnalysisProblem(options.state, `the command run by ${wrapper} cannot be told apart from its options`);
}

/** A runner of the table: its source options, then the command after its options and leading operands. */
function unwrapRunner(options: Unwrap, name: string, words: readonly ShellWord[], spec: RunnerSpec): void {
  const source = optionSet(spec.source);
  const noCommand = optionSet(spec.noCommand);
  const mode = spec.command ?? 'operands';
  const withValue = new Set([...optionSet(spec.values), ...source, ...optionSet(spec.environment)]);
  const read = readOptions(words, { start: 1, withValue, stopAtOperand: mode !== 'none' });
  for (const option of read.options) {
    if (!source.has(option.name)) continue;
    if (option.value === undefined) reportUnknown(options, name);
    else descendIntoSource(options, `${name} ${option.name}`, option.value);
  }
  for (const option of read.options) {
    if (optionSet(spec.environment).has(option.name) && option.value !== undefined)
      judgeEnvironmentWord(options, option.value);
  }
  if (name === 'tar') {
    // `--checkpoint-action=exec=CMD` runs CMD at each checkpoint.
    for (const option of read.options) {
      const action = option.name === '--checkpoint-action' ? option.value : undefined;
      if (action?.isStatic === true && action.value.startsWith('exec=')) {
        descendIntoSource(options, 'tar --checkpoint-action', staticWord(action.value.slice('exec='.length)));
      }
    }
  }
  if (mode === 'none' || read.options.some((option) => noCommand.has(option.name))) return;
  let rest = read.operands;
  if (spec.assignments === true) {
    while (rest[0] !== undefined && judgeEnvironmentWord(options, rest[0])) rest = rest.slice(1);
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
    if (rest.length > 0) descendIntoSource(options, name, joined(rest));
  } else {
    descend(options, name, rest, { onlyDeny: spec.judgedByRunner === true });
  }
}

function unwrapShell(options: Unwrap, name: string, words: readonly ShellWord[]): void {
  let index = 1;
  let runsString = false;
  if (name === 'busybox') {
    // `busybox sh -c …` runs the applet named by the next word.
    descend(options, 'busybox', words.slice(1));
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
      addAnalysisProblem(options.state, `${name} -c has no command`);
      return;
    }
    descendIntoSource(options, `${name} -c`, payload);
  }
}

function unwrapEnv(options: Unwrap, words: readonly ShellWord[]): void {
  // Only env's own options (before the command) count: `env ls -S x` runs `ls -S x`.
  const withValue = optionSet('-u -C -P --unset --chdir');
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
    if (value === '-' || judgeEnvironmentWord(options, word)) {
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
      if (split.value === undefined) reportUnknown(options, 'env');
      else descendIntoSource(options, 'env -S', split.value);
      return;
    }
    index += optionWidth(value, withValue);
  }
  descend(options, 'env', words.slice(index));
}

function unwrapXargs(options: Unwrap, words: readonly ShellWord[]): void {
  const withValue = optionSet(
    '-I -L -n -P -s -d -E -a --max-args --max-procs --arg-file --delimiter --max-chars --max-lines --eof --process-slot-var',
  );
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
  descend(options, 'xargs', inner);
  const program = basename(inner[0]?.value ?? '');
  if (inner[0]?.isStatic === true && Object.hasOwn(FILE_COMMANDS, program)) {
    addAnalysisProblem(options.state, `xargs gives ${program} file names only known when the line runs`);
  }
}

/** `find … -exec CMD {} ;` and `fd -x CMD`; `find … -delete` removes files as `rm -rf` would. */
function unwrapFind(options: Unwrap, name: string, words: readonly ShellWord[]): void {
  const execFlags = name === 'find' ? ['-exec', '-execdir', '-ok', '-okdir'] : ['-x', '--exec', '-X', '--exec-batch'];
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
    descend(options, `${name} ${(words[index] as ShellWord).value}`, inner);
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
    descend(options, 'find -delete', [staticWord('rm'), staticWord('-rf'), ...removed], { derived: true });
  }
}

function unwrapSsh(options: Unwrap, name: 'ssh' | 'scp', words: readonly ShellWord[]): void {
  const read = readOptions(words, { start: 1, withValue: SSH_OPTIONS_WITH_VALUE, stopAtOperand: name === 'ssh' });
  for (const option of read.options) {
    const match =
      option.name === '-o' && option.value?.isStatic === true ? SSH_COMMAND_OPTION.exec(option.value.value) : null;
    if (match !== null) descendIntoSource(options, `${name} -o ${match[1]}`, staticWord(match[2] as string));
  }
  if (name === 'scp') {
    const program = read.options.find((option) => option.name === '-S');
    if (program?.value !== undefined) descend(options, 'scp -S', [program.value]);
    return;
  }
  // The first operand is the host; the rest is a command line for the remote shell.
  const rest = read.operands.slice(1);
  if (rest.length > 0) descendIntoSource(options, 'ssh', joined(rest));
}

function unwrapSuOrRunuser(options: Unwrap, name: string, words: readonly ShellWord[]): void {
  const withValue = optionSet(
    name === 'su' ? '-g -G -s --group --supp-group --shell' : '-g -G -s -u --group --supp-group --shell --user',
  );
  // Options end at `--` (runuser's command follows it).
  const end = words.findIndex((word) => word.value === '--');
  const read = readOptions(end === -1 ? words : words.slice(0, end), {
    start: 1,
    withValue: new Set([...withValue, '-c', '--command', '--session-command']),
    stopAtOperand: false,
  });
  const command = read.options.find((option) => ['-c', '--command', '--session-command'].includes(option.name));
  if (command !== undefined) {
    if (command.value === undefined) reportUnknown(options, name);
    else descendIntoSource(options, `${name} -c`, command.value);
    return;
  }
  if (name === 'runuser' && end !== -1) descend(options, name, words.slice(end + 1));
}

/** `coproc CMD`, `coproc NAME { …; }`: the parser reads the group's words as arguments. */
function unwrapCoproc(options: Unwrap, words: readonly ShellWord[]): void {
  const groupAt = words.findIndex((word, index) => index <= 2 && (word.value === '{' || word.value === '('));
  descend(options, 'coproc', words.slice(groupAt === -1 ? 1 : groupAt + 1));
}

/** `parallel [options] CMD ::: args`, `parallel 'cmd {}' ::: a`, `parallel ::: 'cmd1' 'cmd2'`. */
function unwrapParallel(options: Unwrap, words: readonly ShellWord[]): void {
  const withValue = optionSet(
    '-j -S -N -n -I -a -d -E -P -C --jobs --sshlogin --max-procs --arg-file --delimiter --colsep --joblog --results --tmpdir --timeout --delay --retries --load --memfree --halt --tag-string --basefile --workdir --env --return --transfer-file --id --semaphorename --nice --sshloginfile --slf --limit --termseq --resume-failed --sqlmaster --sqlworker --sqlandworker',
  );
  const read = readOptions(words, { start: 1, withValue, stopAtOperand: true });
  const separator = read.operands.findIndex((word) => /^:{3,4}\+?$/.test(word.value));
  const template = separator === -1 ? read.operands : read.operands.slice(0, separator);
  if (template.length > 0) {
    // parallel hands the command with its arguments (appended, as without `{}`) to a shell.
    const args =
      separator === -1 ? [] : read.operands.slice(separator + 1).filter((word) => !/^:{3,4}\+?$/.test(word.value));
    descendIntoSource(options, 'parallel', joined([...template, ...args]));
    return;
  }
  // Without a command, every argument is a command line of its own.
  for (const word of read.operands.slice(separator + 1)) {
    if (!/^:{3,4}\+?$/.test(word.value)) descendIntoSource(options, 'parallel', word);
  }
}

/** gdb's options that take a value; gdb spells long options with one dash or two (`-ex`, `--batch`). */
const GDB_OPTIONS_WITH_VALUE = new Set(
  'x ex iex ix p c d s e D command eval-command init-command init-eval-command pid core directory symbols exec cd data-directory'.split(
    ' ',
  ),
);

/** `gdb --args CMD…`, and gdb's own `shell CMD` / `!CMD` commands given with `-ex`. */
function unwrapGdb(options: Unwrap, words: readonly ShellWord[]): void {
  const operands: ShellWord[] = [];
  let runs = false;
  for (let index = 1; index < words.length; index += 1) {
    const word = words[index] as ShellWord;
    const option = word.isStatic && word.value.startsWith('-') ? word.value.replace(/^--?/, '') : undefined;
    if (option === 'args') {
      descend(options, 'gdb --args', words.slice(index + 1));
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
    if (!['ex', 'iex', 'eval-command', 'init-eval-command'].includes(name) || value === undefined) continue;
    if (!value.isStatic) {
      addAnalysisProblem(options.state, 'gdb runs commands only known when the line runs');
      continue;
    }
    const shellCommand = /^\s*(?:shell\s+|!)(.*)$/s.exec(value.value);
    if (shellCommand !== null) descendIntoSource(options, 'gdb shell', staticWord(shellCommand[1] as string));
    else if (/^\s*(run|r|start|starti)\b/.test(value.value)) runs = true;
  }
  // `gdb -ex run PROGRAM` runs the program it loaded.
  if (runs && operands[0] !== undefined) descend(options, 'gdb run', [operands[0]]);
}

/** `sg [-] GROUP [-c] COMMAND`: the command is a line for /bin/sh. */
function unwrapSg(options: Unwrap, words: readonly ShellWord[]): void {
  let index = 1;
  if (words[index]?.value === '-') index += 1;
  index += 1;
  if (words[index]?.value === '-c') index += 1;
  const rest = words.slice(index);
  if (rest.length > 0) descendIntoSource(options, 'sg', joined(rest));
}

/** `flock [options] FILE CMD…` or `flock [options] FILE -c 'CMD'`. */
function unwrapFlock(options: Unwrap, words: readonly ShellWord[]): void {
  const read = readOptions(words, {
    start: 1,
    withValue: optionSet('-w -E --timeout --conflict-exit-code'),
    stopAtOperand: true,
  });
  const rest = read.operands.slice(1);
  if (rest[0]?.value === '-c' || rest[0]?.value === '--command') {
    if (rest[1] !== undefined) descendIntoSource(options, 'flock -c', rest[1]);
  } else {
    descend(options, 'flock', rest);
  }
}

/** A `git -c key=value` (or `git config key value`) setting: a command git may run, or code it loads. */
function judgeGitSetting(options: Unwrap, setting: string, where: string): void {
  const equals = setting.indexOf('=');
  const key = equals === -1 ? setting : setting.slice(0, equals);
  const value = equals === -1 ? '' : setting.slice(equals + 1);
  if (GIT_CODE_PATH_KEY.test(key)) {
    addAnalysisProblem(options.state, `${where} sets ${key}, which points git at code it runs`);
  } else if (GIT_COMMAND_KEY.test(key)) {
    addAnalysisProblem(options.state, `${where} sets ${key}, a command git runs`);
    if (value !== '') descendIntoSource(options, `${where} ${key}`, staticWord(value.replace(/^!/, '')));
  }
}

/** Options of git sub-commands whose value is a command git runs. */
const GIT_RUNS_VALUE: Readonly<Record<string, ReadonlySet<string>>> = {
  rebase: optionSet('-x --exec'),
  difftool: optionSet('-x --extcmd'),
  clone: optionSet('-u --upload-pack'),
  fetch: optionSet('--upload-pack'),
  pull: optionSet('--upload-pack'),
  'ls-remote': optionSet('--upload-pack'),
  push: optionSet('--receive-pack --exec'),
  archive: optionSet('--exec'),
  'filter-branch': optionSet(
    '--tree-filter --index-filter --msg-filter --env-filter --commit-filter --parent-filter --tag-name-filter --setup',
  ),
  'send-email': optionSet('--to-cmd --cc-cmd --header-cmd --sendmail-cmd --smtp-server'),
  instaweb: optionSet('--httpd -d --browser -b'),
};

function unwrapGit(options: Unwrap, words: readonly ShellWord[]): void {
  const global = readOptions(words, { start: 1, withValue: optionSet(GIT_GLOBAL_OPTIONS), stopAtOperand: true });
  for (const option of global.options) {
    if (option.name === '-c' && option.value?.isStatic === true) judgeGitSetting(options, option.value.value, 'git -c');
    else if (option.name === '-c' || option.name === '--config-env') {
      addAnalysisProblem(options.state, `git ${option.name} sets configuration only known when the line runs`);
    } else if (['--git-dir', '--work-tree', '--exec-path'].includes(option.name)) {
      addAnalysisProblem(options.state, `git ${option.name} points git at another repository or other programs`);
    }
  }
  // `ext::CMD` URLs make git run CMD (when protocol.ext.allow lets it).
  if (words.some((word) => /^ext::/i.test(word.value))) {
    addAnalysisProblem(options.state, 'git runs the command of an ext:: URL');
  }
  const [sub, ...rest] = global.operands;
  if (sub === undefined) return;
  if (sub.value === 'grep') {
    // `git grep -O<cmd>` opens the files it finds with that command (the value is attached only).
    for (const word of rest) {
      const pager = /^(?:-O|--open-files-in-pager=)(.+)$/s.exec(word.value)?.[1];
      if (pager !== undefined) descendIntoSource(options, 'git grep -O', { ...word, value: pager });
    }
  }
  switch (sub.value) {
    case 'bisect':
      if (rest[0]?.value === 'run') descend(options, 'git bisect run', rest.slice(1));
      return;
    case 'submodule': {
      const foreach = rest.findIndex((word) => word.value === 'foreach');
      if (foreach === -1) break;
      const command = rest.slice(foreach + 1).filter((word) => !/^(--recursive|-q|--quiet)$/.test(word.value));
      if (command.length > 0) descendIntoSource(options, 'git submodule foreach', joined(command));
      return;
    }
    case 'config': {
      const read = readOptions(rest, {
        start: 0,
        withValue: optionSet('-f --file --blob --type --default --comment'),
        stopAtOperand: false,
      });
      // git ≥ 2.46 also spells it `git config set [--append] KEY VALUE`.
      const operands = ['set', 'add'].includes(read.operands[0]?.value ?? '') ? read.operands.slice(1) : read.operands;
      const [key, value] = operands;
      if (key?.isStatic === true && value !== undefined) {
        judgeGitSetting(options, `${key.value}=${value.isStatic ? value.value : ''}`, 'git config');
        if (!value.isStatic && (GIT_COMMAND_KEY.test(key.value) || GIT_CODE_PATH_KEY.test(key.value))) {
          addAnalysisProblem(options.state, `git config sets ${key.value} to a value only known when the line runs`);
        }
      }
      return;
    }
    default:
      break;
  }
  const runs = (Object.hasOwn(GIT_RUNS_VALUE, sub.value) ? GIT_RUNS_VALUE[sub.value] : undefined) ?? new Set<string>();
  const read = readOptions(rest, {
    start: 0,
    withValue: new Set([...runs, ...(sub.value === 'clone' ? ['-c', '--config', '--template'] : ['--template'])]),
    stopAtOperand: false,
  });
  for (const option of read.options) {
    if (runs.has(option.name)) {
      if (option.value !== undefined) descendIntoSource(options, `git ${sub.value} ${option.name}`, option.value);
    } else if ((option.name === '-c' || option.name === '--config') && option.value?.isStatic === true) {
      judgeGitSetting(options, option.value.value, 'git clone -c');
    } else if (option.name === '--template') {
      addAnalysisProblem(options.state, `git ${sub.value} --template copies hooks that git then runs`);
    }
  }
}

function unwrapEval(options: Unwrap, words: readonly ShellWord[]): void {
  // `eval -- 'cmd'`: eval takes no options, but bash accepts and drops a leading `--`.
  const parts = words.slice(words[1]?.value === '--' ? 2 : 1);
  if (parts.length === 0) return;
  descendIntoSource(options, 'eval', joined(parts));
}

function unwrapTrap(options: Unwrap, words: readonly ShellWord[]): void {
  // `trap 'cmd' EXIT` runs cmd later; `trap - INT` and `trap INT` only reset.
  const read = readOptions(words, { start: 1, withValue: new Set(), stopAtOperand: true });
  const action = read.operands[0];
  if (action !== undefined && read.operands.length >= 2 && action.value !== '-') {
    descendIntoSource(options, 'trap', action);
  }
}

function unwrapCommandBuiltin(options: Unwrap, words: readonly ShellWord[]): void {
  const read = readOptions(words, { start: 1, withValue: new Set(), stopAtOperand: true });
  // `command -v x` only looks a name up (a `-v` after the name belongs to the command).
  if (read.options.some((option) => option.name === '-v' || option.name === '-V')) return;
  descend(options, 'command', read.operands);
}

/** Runners whose command is found by a rule of their own. */
const SPECIAL_RUNNERS: Readonly<Record<string, (unwrap: Unwrap, name: string, words: readonly ShellWord[]) => void>> = {
  eval: (unwrap, _name, words) => unwrapEval(unwrap, words),
  env: (unwrap, _name, words) => unwrapEnv(unwrap, words),
  command: (unwrap, _name, words) => unwrapCommandBuiltin(unwrap, words),
  trap: (unwrap, _name, words) => unwrapTrap(unwrap, words),
  xargs: (unwrap, _name, words) => unwrapXargs(unwrap, words),
  find: (unwrap, name, words) => unwrapFind(unwrap, name, words),
  fd: (unwrap, name, words) => unwrapFind(unwrap, name, words),
  ssh: (unwrap, _name, words) => unwrapSsh(unwrap, 'ssh', words),
  sftp: (unwrap, _name, words) => unwrapSsh(unwrap, 'scp', words),
  scp: (unwrap, _name, words) => {
    unwrapSsh(unwrap, 'scp', words);
    unwrapRunner(unwrap, 'scp', words, RUNNERS.scp as RunnerSpec);
  },
  su: unwrapSuOrRunuser,
  runuser: unwrapSuOrRunuser,
  coproc: (unwrap, _name, words) => unwrapCoproc(unwrap, words),
  parallel: (unwrap, _name, words) => unwrapParallel(unwrap, words),
  sem: (unwrap, _name, words) => unwrapParallel(unwrap, words),
  gdb: (unwrap, _name, words) => unwrapGdb(unwrap, words),
  sg: (unwrap, _name, words) => unwrapSg(unwrap, words),
  flock: (unwrap, _name, words) => unwrapFlock(unwrap, words),
  git: (unwrap, _name, words) => unwrapGit(unwrap, words),
};

/** Finds the commands a wrapper, shell, `eval` or a command-running option runs, and records them too. */
export function unwrapCommand(
  state: AnalysisState,
  options: { words: readonly ShellWord[]; via: string[]; nesting: number; onlyDeny: boolean },
): boolean {
  const { words } = options;
  const name = basename((words[0] as ShellWord).value);
  const unwrap: Unwrap = { state, via: options.via, nesting: options.nesting, onlyDeny: options.onlyDeny };
  const before = state.analysis.commands.length;
  // `npm -y exec CMD`, `uv -q run CMD`: global options may stand before the sub-command.
  const bare = withoutGlobalOptions(words, name) ?? words;
  const subcommand = SUBCOMMAND_RUNNERS[`${name} ${bare[1]?.value ?? ''}`];
  if (SHELLS.has(name)) {
    unwrapShell(unwrap, name, words);
  } else if (subcommand !== undefined) {
    unwrapRunner(unwrap, `${name} ${bare[1]?.value}`, bare.slice(1), subcommand);
  } else if (Object.hasOwn(SPECIAL_RUNNERS, name)) {
    (SPECIAL_RUNNERS[name] as (typeof SPECIAL_RUNNERS)[string])(unwrap, name, words);
  } else if (Object.hasOwn(RUNNERS, name)) {
    unwrapRunner(unwrap, name, words, RUNNERS[name] as RunnerSpec);
  }
  return state.analysis.commands.length > before;
}

/**
 * Whether a shell reads its program from standard input, as bash reads its options: only `-c`
 * gives it one and a first operand names a script; `-s` reads standard input whatever follows,
 * and `-o`/`-O`/`--rcfile` take a value (`bash -e -o pipefail <<< '…'` reads the here-string).
 */
function shellReadsStdin(words: readonly ShellWord[]): boolean {
  let index = 1;
  while (index < words.length) {
    const word = words[index] as ShellWord;
    if (!word.isStatic) return false;
    const value = word.value;
    if (value === '--' || value === '-') return index + 1 >= words.length;
    if (!/^[-+]/.test(value)) return false;
    if (SHELL_OPTIONS_WITH_VALUE.has(value)) {
      index += 2;
      continue;
    }
    if (!value.startsWith('--')) {
      if (value.slice(1).includes('c')) return false;
      if (value.slice(1).includes('s')) return true;
    } else if (value === '--command') {
      return false;
    }
    index += 1;
  }
  return true;
}

/** Files that are a pipe from the line itself: what a program reads from them is made when it runs. */
const PIPE_FILE = /^(\/dev\/(stdin|fd\/\d+)|\/proc\/(self|thread-self|\d+)\/fd\/\d+)$/;

/**
 * Whether a shell, an interpreter or `source` would run a program read from a pipe named as its
 * script: `source <(curl …)`, `bash <(echo …)`, `. /dev/stdin <<< '…'`, `python3 /dev/fd/3`.
 */
export function runsProgramFromPipe(words: readonly ShellWord[]): boolean {
  const name = basename((words[0] as ShellWord).value);
  if (!SHELLS.has(name) && !INTERPRETERS.has(name) && name !== 'source' && name !== '.') return false;
  return words
    .slice(1)
    .some((word) => word.processSubstitution === true || (word.isStatic && PIPE_FILE.test(word.value)));
}

/**
 * Whether an interpreter or shell would read its program from standard input (no script, no
 * `-c`/`-e`): then no pattern can describe what it runs.
 */
export function readsProgramFromStdin(words: readonly ShellWord[]): boolean {
  const name = basename((words[0] as ShellWord).value);
  if (SHELLS.has(name) && name !== 'busybox') return shellReadsStdin(words);
  if (!INTERPRETERS.has(name)) return false;
  return words
    .slice(1)
    .every(
      (word) =>
        word.isStatic &&
        word.value.startsWith('-') &&
        !/^-[A-Za-z]*[ceEm]/.test(word.value) &&
        word.value !== '--command',
    );
}

import {
  type AnalysisState,
  addAnalysisProblem,
  analyzeSource,
  pushCommand,
  SHELL_ANALYSIS_LIMITS,
} from './analyze-shell-line.ts';
import type { ShellWord } from './shell-words.ts';

/** Options that consume the next word, per wrapper (short and long forms). */
const OPTIONS_WITH_VALUE: Record<string, ReadonlySet<string>> = {
  sudo: new Set(['-u', '-g', '-C', '-D', '-h', '-p', '-r', '-t', '-T', '-U', '--user', '--group', '--chdir']),
  doas: new Set(['-u', '-C']),
  env: new Set(['-u', '-C', '--unset', '--chdir']),
  timeout: new Set(['-s', '-k', '--signal', '--kill-after']),
  nice: new Set(['-n', '--adjustment']),
  ionice: new Set(['-c', '-n', '-p', '-P', '-u', '--class', '--classdata']),
  stdbuf: new Set(['-i', '-o', '-e']),
  exec: new Set(['-a']),
  time: new Set(['-f', '-o', '--format', '--output']),
  flock: new Set(['-w', '-E', '--timeout', '--conflict-exit-code']),
  xargs: new Set([
    '-I',
    '-L',
    '-n',
    '-P',
    '-s',
    '-d',
    '-E',
    '-a',
    '--max-args',
    '--max-procs',
    '--arg-file',
    '--delimiter',
  ]),
  ssh: new Set([
    '-b',
    '-c',
    '-D',
    '-E',
    '-e',
    '-F',
    '-I',
    '-i',
    '-J',
    '-L',
    '-l',
    '-m',
    '-O',
    '-o',
    '-p',
    '-Q',
    '-R',
    '-S',
    '-W',
    '-w',
    '-B',
  ]),
  watch: new Set(['-n', '-d', '--interval']),
  su: new Set(['-g', '-G', '-s', '--group', '--supp-group', '--shell']),
  runuser: new Set(['-g', '-G', '-s', '-u', '--group', '--supp-group', '--shell', '--user']),
  setsid: new Set([]),
  nohup: new Set([]),
  chroot: new Set(['--userspec', '--groups']),
  command: new Set([]),
  coproc: new Set([]),
  builtin: new Set([]),
};

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

function basename(path: string): string {
  const slash = path.lastIndexOf('/');
  return slash === -1 ? path : path.slice(slash + 1);
}

type Unwrap = { state: AnalysisState; via: string[]; nesting: number };

function descend(options: Unwrap, wrapper: string, inner: ShellWord[]): void {
  const { state, nesting } = options;
  if (inner.length === 0) return;
  if (nesting + 1 > SHELL_ANALYSIS_LIMITS.maxNesting) {
    addAnalysisProblem(state, `commands are wrapped more than ${SHELL_ANALYSIS_LIMITS.maxNesting} levels deep`);
    return;
  }
  const via = [...options.via, wrapper];
  const command = pushCommand(state, { words: inner, redirects: '', via });
  if (command !== undefined && command.opaque === undefined) {
    unwrapCommand(state, { words: inner, via, nesting: nesting + 1 });
  }
}

function descendIntoSource(options: Unwrap, wrapper: string, payload: ShellWord): void {
  const { state, nesting } = options;
  if (!payload.isStatic) {
    addAnalysisProblem(state, `${wrapper} runs a command that is only known when the line runs: ${payload.value}`);
    return;
  }
  if (nesting + 1 > SHELL_ANALYSIS_LIMITS.maxNesting) {
    addAnalysisProblem(state, `commands are wrapped more than ${SHELL_ANALYSIS_LIMITS.maxNesting} levels deep`);
    return;
  }
  analyzeSource(state, { source: payload.value, via: [...options.via, wrapper], nesting: nesting + 1 });
}

/**
 * Skips a wrapper's options and leading `VAR=value` words; returns the index of the wrapped
 * command's first word, or undefined when an option's meaning is unknown (so the wrapped command
 * cannot be found with certainty).
 */
function skipOptions(
  words: readonly ShellWord[],
  options: { start: number; withValue: ReadonlySet<string>; assignments: boolean },
): number | undefined {
  let index = options.start;
  while (index < words.length) {
    const word = words[index] as ShellWord;
    if (!word.isStatic) return index;
    const value = word.value;
    if (value === '--') return index + 1;
    if (options.assignments && /^[A-Za-z_][A-Za-z0-9_]*=/.test(value)) {
      index += 1;
      continue;
    }
    if (!value.startsWith('-') || value === '-') return index;
    index += optionWidth(value, options.withValue);
  }
  return index;
}

/**
 * How many words an option takes: 2 when it, or the last of a cluster of short options
 * (`sudo -nu bob`), takes the next word as its value; `-ubob` and `--user=bob` carry theirs.
 */
function optionWidth(value: string, withValue: ReadonlySet<string>): number {
  if (value.includes('=')) return 1;
  if (withValue.has(value)) return 2;
  if (value.startsWith('--')) return 1;
  const valueAt = [...value.slice(1)].findIndex((char) => withValue.has(`-${char}`));
  return valueAt !== -1 && valueAt === value.length - 2 ? 2 : 1;
}

/**
 * The value of the option `short`/`long` when `words[index]` is that option: `-c x`, `-lc x`, `-cx`,
 * `--command=x`, `--command x`. 'none' when the word is some other option; undefined when the
 * value is missing.
 */
function optionValue(
  words: readonly ShellWord[],
  index: number,
  option: { short: string; long: readonly string[]; withValue: ReadonlySet<string> },
): ShellWord | undefined | 'none' {
  const word = words[index] as ShellWord;
  const value = word.value;
  if (!word.isStatic || !value.startsWith('-')) return 'none';
  for (const long of option.long) {
    if (value === long) return words[index + 1];
    if (value.startsWith(`${long}=`)) return { ...word, value: value.slice(long.length + 1) };
  }
  if (value.startsWith('--')) return 'none';
  // In a cluster of short options the first that takes a value takes the rest of the word.
  for (let at = 1; at < value.length; at += 1) {
    const char = value[at] as string;
    if (char === option.short) {
      return at + 1 < value.length ? { ...word, value: value.slice(at + 1) } : words[index + 1];
    }
    if (option.withValue.has(`-${char}`)) return 'none';
  }
  return 'none';
}

function reportUnknown(options: Unwrap, wrapper: string): void {
  addAnalysisProblem(options.state, `the command run by ${wrapper} cannot be told apart from its options`);
}

function unwrapShell(options: Unwrap, name: string, words: readonly ShellWord[]): void {
  let index = 1;
  let runsString = false;
  if (name === 'busybox') {
    // `busybox sh -c …` runs the applet named by the next word.
    const applet = words[1];
    if (applet === undefined) return;
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

/** Finds the commands a wrapper, shell or `eval` runs and records them too. */
export function unwrapCommand(
  state: AnalysisState,
  options: { words: readonly ShellWord[]; via: string[]; nesting: number },
): void {
  const { words } = options;
  const first = words[0] as ShellWord;
  const name = basename(first.value);
  const unwrap: Unwrap = { state, via: options.via, nesting: options.nesting };

  if (SHELLS.has(name)) {
    unwrapShell(unwrap, name, words);
    return;
  }
  switch (name) {
    case 'eval': {
      const parts = words.slice(1);
      if (parts.length === 0) return;
      const dynamicPart = parts.find((word) => !word.isStatic);
      descendIntoSource(
        unwrap,
        'eval',
        dynamicPart ?? { value: parts.map((word) => word.value).join(' '), isStatic: true, hasGlob: false },
      );
      return;
    }
    case 'sudo':
    case 'doas':
    case 'nice':
    case 'ionice':
    case 'stdbuf':
    case 'nohup':
    case 'setsid':
    case 'exec':
    case 'time':
    case 'coproc':
    case 'builtin': {
      const start = skipOptions(words, {
        start: 1,
        withValue: OPTIONS_WITH_VALUE[name] as ReadonlySet<string>,
        assignments: name === 'sudo',
      });
      if (start === undefined) reportUnknown(unwrap, name);
      else descend(unwrap, name, words.slice(start));
      return;
    }
    case 'command': {
      const start = skipOptions(words, { start: 1, withValue: new Set(), assignments: false });
      // `command -v x` only looks a name up (a `-v` after the name belongs to the command).
      if (words.slice(1, start).some((word) => /^-[pvV]*[vV]/.test(word.value))) return;
      if (start !== undefined) descend(unwrap, name, words.slice(start));
      return;
    }
    case 'env': {
      // Only env's own options (before the command) count: `env ls -S x` runs `ls -S x`.
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
        if (value === '-' || /^[A-Za-z_][A-Za-z0-9_]*=/.test(value)) {
          index += 1;
          continue;
        }
        if (!value.startsWith('-')) break;
        const payload = optionValue(words, index, {
          short: 'S',
          long: ['--split-string'],
          withValue: OPTIONS_WITH_VALUE.env as ReadonlySet<string>,
        });
        if (payload === undefined) {
          reportUnknown(unwrap, name);
          return;
        }
        if (payload !== 'none') {
          descendIntoSource(unwrap, 'env -S', payload);
          return;
        }
        index += optionWidth(value, OPTIONS_WITH_VALUE.env as ReadonlySet<string>);
      }
      descend(unwrap, name, words.slice(index));
      return;
    }
    case 'trap': {
      // `trap 'cmd' EXIT` runs cmd later; `trap - INT` and `trap INT` only reset.
      const start = skipOptions(words, { start: 1, withValue: new Set(), assignments: false }) ?? words.length;
      const action = words[start];
      if (action !== undefined && words.length - start >= 2 && action.value !== '-') {
        descendIntoSource(unwrap, 'trap', action);
      }
      return;
    }
    case 'timeout': {
      const start = skipOptions(words, {
        start: 1,
        withValue: OPTIONS_WITH_VALUE.timeout as ReadonlySet<string>,
        assignments: false,
      });
      // The first operand is the duration.
      if (start === undefined) reportUnknown(unwrap, name);
      else descend(unwrap, name, words.slice(start + 1));
      return;
    }
    case 'chroot': {
      const start = skipOptions(words, {
        start: 1,
        withValue: OPTIONS_WITH_VALUE.chroot as ReadonlySet<string>,
        assignments: false,
      });
      if (start === undefined) reportUnknown(unwrap, name);
      else descend(unwrap, name, words.slice(start + 1));
      return;
    }
    case 'flock': {
      const start = skipOptions(words, {
        start: 1,
        withValue: OPTIONS_WITH_VALUE.flock as ReadonlySet<string>,
        assignments: false,
      });
      if (start === undefined) {
        reportUnknown(unwrap, name);
        return;
      }
      const rest = words.slice(start + 1);
      const commandFlag = rest.findIndex((word) => word.value === '-c' || word.value === '--command');
      if (commandFlag !== -1) {
        const payload = rest[commandFlag + 1];
        if (payload !== undefined) descendIntoSource(unwrap, 'flock -c', payload);
      } else {
        descend(unwrap, name, rest);
      }
      return;
    }
    case 'su':
    case 'runuser': {
      const withValue = OPTIONS_WITH_VALUE[name] as ReadonlySet<string>;
      // Options end at `--` (runuser's command follows it).
      for (let index = 1; index < words.length && words[index]?.value !== '--'; index += 1) {
        const payload = optionValue(words, index, { short: 'c', long: ['--command', '--session-command'], withValue });
        if (payload === 'none') continue;
        if (payload === undefined) reportUnknown(unwrap, name);
        else descendIntoSource(unwrap, `${name} -c`, payload);
        return;
      }
      if (name === 'runuser') {
        const separator = words.findIndex((word) => word.value === '--');
        if (separator !== -1) descend(unwrap, name, words.slice(separator + 1));
      }
      return;
    }
    case 'watch': {
      const start = skipOptions(words, {
        start: 1,
        withValue: OPTIONS_WITH_VALUE.watch as ReadonlySet<string>,
        assignments: false,
      });
      if (start === undefined) {
        reportUnknown(unwrap, name);
        return;
      }
      // watch hands its words to `sh -c` joined by spaces.
      const rest = words.slice(start);
      const dynamicPart = rest.find((word) => !word.isStatic);
      if (rest.length > 0) {
        descendIntoSource(
          unwrap,
          'watch',
          dynamicPart ?? { value: rest.map((word) => word.value).join(' '), isStatic: true, hasGlob: false },
        );
      }
      return;
    }
    case 'ssh': {
      const start = skipOptions(words, {
        start: 1,
        withValue: OPTIONS_WITH_VALUE.ssh as ReadonlySet<string>,
        assignments: false,
      });
      if (start === undefined) return;
      // The first operand is the host; the rest is a command line for the remote shell.
      const rest = words.slice(start + 1);
      const dynamicPart = rest.find((word) => !word.isStatic);
      if (rest.length > 0) {
        descendIntoSource(
          unwrap,
          'ssh',
          dynamicPart ?? { value: rest.map((word) => word.value).join(' '), isStatic: true, hasGlob: false },
        );
      }
      return;
    }
    case 'xargs': {
      let index = 1;
      while (index < words.length) {
        const value = (words[index] as ShellWord).value;
        if (value === '--') {
          index += 1;
          break;
        }
        if (!value.startsWith('-')) break;
        index += optionWidth(value, OPTIONS_WITH_VALUE.xargs as ReadonlySet<string>);
      }
      // Without a command xargs runs echo, which is harmless.
      descend(unwrap, 'xargs', words.slice(index));
      return;
    }
    case 'find':
    case 'fd': {
      const execFlags =
        name === 'find' ? ['-exec', '-execdir', '-ok', '-okdir'] : ['-x', '--exec', '-X', '--exec-batch'];
      for (let index = 1; index < words.length; index += 1) {
        if (!execFlags.includes((words[index] as ShellWord).value)) continue;
        let end = index + 1;
        while (end < words.length && ![';', '+', '\\;'].includes((words[end] as ShellWord).value)) end += 1;
        descend(unwrap, `${name} ${(words[index] as ShellWord).value}`, words.slice(index + 1, end));
        index = end;
      }
      return;
    }
    default:
      return;
  }
}

/**
 * Whether an interpreter or shell would read its program from standard input (no script, no
 * `-c`/`-e`): then no pattern can describe what it runs.
 */
export function readsProgramFromStdin(words: readonly ShellWord[]): boolean {
  const name = basename((words[0] as ShellWord).value);
  if (!SHELLS.has(name) && !INTERPRETERS.has(name)) return false;
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

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
    const flag = value.includes('=') ? value.slice(0, value.indexOf('=')) : value;
    if (options.withValue.has(flag) && !value.includes('=')) {
      index += 2;
    } else {
      index += 1;
    }
  }
  return index;
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
      // `command -v x` only looks a name up.
      if (words.some((word) => word.value === '-v' || word.value === '-V')) return;
      const start = skipOptions(words, { start: 1, withValue: new Set(), assignments: false });
      if (start !== undefined) descend(unwrap, name, words.slice(start));
      return;
    }
    case 'env': {
      const split = words.findIndex((word) => word.value === '-S' || word.value.startsWith('--split-string'));
      if (split !== -1) {
        const inline = words[split] as ShellWord;
        const payload = inline.value.startsWith('--split-string=')
          ? { ...inline, value: inline.value.slice('--split-string='.length) }
          : words[split + 1];
        if (payload === undefined) reportUnknown(unwrap, name);
        else descendIntoSource(unwrap, 'env -S', payload);
        return;
      }
      const start = skipOptions(words, {
        start: 1,
        withValue: OPTIONS_WITH_VALUE.env as ReadonlySet<string>,
        assignments: true,
      });
      if (start === undefined) reportUnknown(unwrap, name);
      else descend(unwrap, name, words.slice(start));
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
      const commandFlag = words.findIndex((word) => word.value === '-c' || word.value === '--command');
      if (commandFlag !== -1) {
        const payload = words[commandFlag + 1];
        if (payload === undefined) reportUnknown(unwrap, name);
        else descendIntoSource(unwrap, `${name} -c`, payload);
      } else if (name === 'runuser') {
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
        const flag = value.includes('=') ? value.slice(0, value.indexOf('=')) : value;
        index += (OPTIONS_WITH_VALUE.xargs as ReadonlySet<string>).has(flag) && !value.includes('=') ? 2 : 1;
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

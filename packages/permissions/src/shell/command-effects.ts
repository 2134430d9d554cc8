import { posix } from 'node:path';
import {
  type AnalysisState,
  addProblem,
  type FileAccess,
  judge,
  NAME_PROBLEM,
  type SourcePosition,
} from './analysis-state.ts';
import { ARITHMETIC_PROBLEM } from './arithmetic.ts';
import { optionSet, readOptions } from './command-options.ts';
import { DEVICE_TARGETS, fileArgumentsOf, hasFileSpec } from './file-arguments.ts';
import { programName } from './program-name.ts';
import { renderWords, type ShellWord } from './shell-words.ts';
import { runsProgramFromPipe } from './stdin-programs.ts';
import { setExportsAssignments } from './variable-assignments.ts';

/*
 * What one command does besides running what it names: the shell state it changes, the files it
 * names, the options that make it run code of their own. What it runs in turn (`unwrapCommand`,
 * `builtinCallbacksOf`) is the analyser's to follow.
 */

const NETWORK_TARGET = /^\/dev\/(tcp|udp)\//;
/** Paths through a process's own view of the filesystem (its cwd, root, descriptors). */
const PROCESS_RELATIVE =
  /^\/proc\/(self|thread-self|\d+)\/(cwd|root|fd|map_files)(\/|$)|^\/dev\/fd\/(?!\d+$)|^\/dev\/std(in|out|err)\//;

/** `/dev/tcp/HOST/PORT`, `/dev/udp/…`: bash opens a network connection, no file. */
export function isNetworkTarget(path: string): boolean {
  return NETWORK_TARGET.test(path);
}

/** `/dev/null`, the standard streams, `/dev/fd/N`: reading or writing them changes no file. */
export function isDeviceTarget(path: string): boolean {
  return DEVICE_TARGETS.has(path) || /^\/dev\/fd\/\d+$/.test(path);
}

/** Records a file the line reads or writes; a name only known at run time makes the line ask. */
export function recordFile(state: AnalysisState, access: Omit<FileAccess, 'bases'>): void {
  const { path } = access;
  // `diff <(sort a) <(sort b)`: a pipe from commands analyzed on their own, no file.
  if (path.processSubstitution === true) return;
  if (!path.isStatic) {
    addProblem(
      state,
      `${access.by} ${access.access === 'read' ? 'reads' : 'writes'} a file whose name is only known when the line runs`,
    );
    return;
  }
  // `cat {.env,notes.txt}` names two files.
  for (const value of path.expansions ?? [path.value]) {
    if (isDeviceTarget(value)) continue;
    // `/proc/self/cwd/…` is the shell's directory, `/dev/fd/../…` another process's view: the gate
    // would resolve them in the worker instead.
    if (PROCESS_RELATIVE.test(value)) {
      addProblem(state, `${access.by} names ${value}, which leads somewhere only the running shell knows`);
      continue;
    }
    if (NETWORK_TARGET.test(value)) {
      addProblem(state, `it opens a network connection through ${value}`);
      continue;
    }
    const single: ShellWord =
      path.expansions === undefined ? path : { value, isStatic: true, hasGlob: /[*?[]/.test(value) };
    if (state.analysis.files.length >= state.limits.maxFiles) {
      addProblem(state, `the line names more than ${state.limits.maxFiles} files`);
      return;
    }
    const at = state.position;
    const leftStart =
      at !== undefined &&
      state.awayFromStart.some((range) => range.source === at.source && range.start <= at.at && at.at < range.end);
    state.analysis.files.push({
      ...access,
      path: single,
      bases: state.directories,
      ...(leftStart && state.directories.length > 0 ? { leftStart: true as const } : {}),
    });
  }
}

/** The words a file argument stands for: itself, or the values of the loop variable it expands. */
function possibleValues(state: AnalysisState, word: ShellWord, where: SourcePosition | undefined): ShellWord[] {
  if (word.isStatic || where === undefined) return [word];
  const name = /^"?\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?"?$/.exec(word.value)?.[1];
  const loop = state.loops.findLast(
    (candidate) =>
      candidate.name === name &&
      candidate.source === where.source &&
      candidate.start <= where.at &&
      where.at < candidate.end,
  );
  return loop?.values ?? [word];
}

/** A directory the line moves to (`cd x`, `git -C x`); one only known at run time makes the line ask. */
function changeDirectory(state: AnalysisState, target: ShellWord | undefined, by: string): void {
  const home = state.context.home;
  const value = target === undefined ? home : target.isStatic ? target.value : undefined;
  if (value === undefined || value === '-' || target?.hasGlob === true) {
    addProblem(state, `${by} changes to a directory only known when the line runs, so its files cannot be judged`);
    return;
  }
  const last = state.directories.at(-1);
  const next = last === undefined || value.startsWith('/') ? value : posix.join(last, value);
  if (state.directories.includes(next)) return;
  if (state.directories.length >= state.limits.maxDirectories) {
    addProblem(state, `the line changes to more than ${state.limits.maxDirectories} directories`);
    return;
  }
  // A new list: files recorded so far keep the directories the line had been to then.
  state.directories = [...state.directories, next];
}

/** Options of commands that run in another directory: their files are judged from there too. */
const DIRECTORY_OPTIONS: Readonly<Record<string, ReadonlySet<string>>> = {
  git: optionSet('-C'),
  env: optionSet('-C --chdir'),
  sudo: optionSet('-D --chdir'),
  make: optionSet('-C --directory'),
  tar: optionSet('-C --directory'),
};

/** `shopt -s` options that change how bash reads the rest of the line. */
const LINE_CHANGING_SHOPTS = /^(expand_aliases|dotglob|nocaseglob|globstar|extglob|nullglob|failglob)$/;

/**
 * What a command changes about the shell itself: variables it assigns by name (`read NAME`,
 * `printf -v NAME`, `mapfile NAME`, `getopts OPTS NAME`, `let NAME=…`, `make NAME=…`), the directory
 * (`cd`), options (`set -a`, `shopt -s expand_aliases`) and the command hash. The command lines a
 * builtin keeps (an alias body, a mapfile callback) are `builtinCallbacksOf`'s.
 */
export function recordShellEffects(state: AnalysisState, words: readonly ShellWord[]): void {
  const name = programName((words[0] as ShellWord).value);
  const names: ShellWord[] = [];
  const directoryOptions = Object.hasOwn(DIRECTORY_OPTIONS, name) ? DIRECTORY_OPTIONS[name] : undefined;
  if (directoryOptions !== undefined) {
    const read = readOptions(words, { start: 1, withValue: directoryOptions, stopAtOperand: name !== 'tar' });
    for (const option of read.options) {
      if (directoryOptions.has(option.name)) changeDirectory(state, option.value, `${name} ${option.name}`);
    }
  }
  switch (name) {
    case 'cd':
    case 'pushd': {
      const read = readOptions(words, { start: 1, withValue: new Set(), stopAtOperand: true });
      changeDirectory(state, read.operands[0], name);
      break;
    }
    case 'read': {
      const read = readOptions(words, {
        start: 1,
        withValue: optionSet('-a -d -i -n -N -p -t -u'),
        stopAtOperand: false,
      });
      names.push(
        ...read.operands,
        ...read.options.filter((option) => option.name === '-a').flatMap((option) => option.value ?? []),
      );
      break;
    }
    case 'printf': {
      const read = readOptions(words, { start: 1, withValue: optionSet('-v'), stopAtOperand: true });
      names.push(...read.options.filter((option) => option.name === '-v').flatMap((option) => option.value ?? []));
      break;
    }
    case 'mapfile':
    case 'readarray': {
      const read = readOptions(words, { start: 1, withValue: optionSet('-d -n -O -s -u -C -c'), stopAtOperand: false });
      // Its `-C CALLBACK` is a command line (`builtinCallbacksOf`).
      names.push(...read.operands.slice(-1));
      break;
    }
    case 'unset':
      names.push(...words.slice(1).filter((word) => !word.value.startsWith('-')));
      for (const word of names) {
        if (!word.isStatic || /\[[^\]]*[A-Za-z_$`]/.test(word.value)) addProblem(state, NAME_PROBLEM);
      }
      return;
    case 'getopts':
      if (words[2] !== undefined) names.push(words[2]);
      break;
    case 'let':
      for (const word of words.slice(1)) {
        const match = /^([A-Za-z_][A-Za-z0-9_]*)\s*[-+*/%^|&]?=/.exec(word.value);
        if (match !== null) names.push({ ...word, value: match[1] as string });
      }
      break;
    case 'make':
    case 'gmake':
      // `make CC=… test`: a variable given to make is set for every recipe it runs (SHELL, CC…).
      for (const word of words.slice(1)) {
        const match = word.isStatic ? /^([A-Za-z_][A-Za-z0-9_]*)[:+?]?=(.*)$/s.exec(word.value) : null;
        if (match !== null) {
          judge(state, { name: match[1] as string, value: match[2] as string, hasValue: true, reach: 'environment' });
        }
      }
      return;
    case 'set':
    case 'shopt': {
      const values = words.map((word) => word.value);
      if (setExportsAssignments(values)) {
        addProblem(state, 'set -a (allexport) or -k passes every later assignment to the programs the line runs');
      }
      if (name === 'shopt' && values.some((value) => /^-[a-z]*s/.test(value))) {
        const changed = values.slice(1).filter((value) => LINE_CHANGING_SHOPTS.test(value));
        if (changed.length > 0) addProblem(state, `shopt -s ${changed.join(' ')} changes how bash reads the line`);
      }
      return;
    }
    case 'hash':
      if (words.some((word) => /^-[a-z]*p/.test(word.value))) {
        addProblem(state, 'hash -p makes a command name run another program');
      }
      return;
    case 'enable':
      if (words.some((word) => /^-[a-z]*f/.test(word.value)))
        addProblem(state, 'enable -f loads a builtin from a library');
      return;
    case 'at':
    case 'batch':
      addProblem(state, `${name} runs commands it reads later, which no rule sees`);
      return;
    case 'vim':
    case 'vi':
    case 'nvim':
    case 'ex':
    case 'view':
      // `-c '!cmd'`, `+!cmd`, `-S script`: editor commands can run shell commands.
      if (words.some((word) => /^(-c|--cmd|-S|\+)/.test(word.value))) {
        addProblem(state, `${name} runs editor commands given on its command line, which can run programs`);
      }
      return;
    default:
      return;
  }
  for (const word of names) {
    if (!word.isStatic) {
      addProblem(state, NAME_PROBLEM);
      continue;
    }
    // `read 'arr[x]'`: an index of an indexed array is evaluated as arithmetic.
    if (/\[[^\]]*[A-Za-z_]/.test(word.value)) addProblem(state, ARITHMETIC_PROBLEM);
    judge(state, { name: word.value.replace(/\[.*$/s, ''), value: undefined, hasValue: false, reach: 'shell' });
  }
}

/**
 * The file arguments of a command Molf understands, as files the line reads and writes. Returns the
 * words it took as files.
 */
function recordFileArguments(
  state: AnalysisState,
  words: readonly ShellWord[],
  options: { via: string[] },
): ReadonlySet<string> {
  const files = fileArgumentsOf(words);
  const by = renderWords(words.slice(0, 2));
  const accesses = [
    ...files.reads.map((word) => ({ word, access: 'read' as const })),
    ...files.writes.map((word) => ({ word, access: 'write' as const })),
    ...files.trees.map((word) => ({ word, access: 'read' as const, recursive: 'all' as const })),
    ...files.visibleTrees.map((word) => ({ word, access: 'read' as const, recursive: 'visible' as const })),
  ];
  for (const { word, ...access } of accesses) {
    for (const path of possibleValues(state, word, state.position)) {
      // Past the bound the line asks anyway: stop, however many values a loop has.
      if (state.analysis.files.length >= state.limits.maxFiles) {
        addProblem(state, `the line names more than ${state.limits.maxFiles} files`);
        break;
      }
      recordFile(state, { ...access, path, via: options.via, by });
    }
  }
  for (const problem of files.problems) addProblem(state, problem);
  return new Set(accesses.map(({ word }) => word.value));
}

/**
 * Options that make an allowed command run other code: a shell for scripts, Node options, plugins,
 * configuration given on the command line (`npm test --script-shell=./x`, `pytest -p evil`).
 */
const CODE_OPTIONS: Readonly<Record<string, RegExp>> = {
  npm: /^--(script-shell|node-options|userconfig|globalconfig)(=|$)|^script-shell$|^node-options$/,
  pnpm: /^--(script-shell|node-options|config\.)|^script-shell$|^node-options$/,
  yarn: /^--(script-shell|node-options)(=|$)/,
  pytest: /^(-p|--override-ini|-o|--confcutdir|--rootdir|-c)(=|$)|^-p\w/,
  cargo: /^--config(=|$)|^-Z/,
  go: /^-w$|^-toolexec|^-exec/,
};

function recordCodeOptions(state: AnalysisState, words: readonly ShellWord[]): void {
  const name = programName((words[0] as ShellWord).value);
  const pattern = Object.hasOwn(CODE_OPTIONS, name) ? CODE_OPTIONS[name] : undefined;
  if (pattern === undefined) return;
  const found = words.slice(1).find((word) => pattern.test(word.value));
  if (found !== undefined) addProblem(state, `${found.value} makes ${name} run code the line does not show`);
}

/** Commands that never open their arguments as files: naming `.env` to them is no access. */
const NO_FILE_ACCESS = new Set([
  'echo',
  'printf',
  'ls',
  'test',
  '[',
  '[[',
  'basename',
  'dirname',
  'which',
  'type',
  'true',
  'false',
  'stat',
  'realpath',
  'readlink',
  'export',
]);
/** Programs whose plain words are refs, packages or module paths rather than files. */
const PLAIN_WORDS_NO_FILES = new Set([
  'git',
  'npm',
  'pnpm',
  'yarn',
  'bun',
  'pip',
  'pip3',
  'uv',
  'cargo',
  'go',
  'docker',
  'podman',
  'kubectl',
  'helm',
  'gh',
]);
/** Path-like arguments kept per line: enough for any real line; they are a heuristic, not a bound. */
const MAX_MENTIONS = 256;

/**
 * The path-like arguments of a command (`python3 .env`, `gzip .git/config`, `--in=.env`, `@.env`,
 * `file:.env`) that are not files Molf already understood: a command it does not model may open
 * them, so a deny of them by the read_file or write_file rules makes the line ask.
 */
export function recordMentions(
  state: AnalysisState,
  words: readonly ShellWord[],
  options: { via: string[]; files: ReadonlySet<string> },
): void {
  const program = programName((words[0] as ShellWord).value);
  if (NO_FILE_ACCESS.has(program)) return;
  // Molf knows which plain words of the commands it models are files (the rest are patterns,
  // scripts, filters); only the shapes that always name a file count there (`--in=.env`, `@.env`).
  // git's and package managers' plain words are refs and package names.
  const onlyFileShapes = options.files.size > 0 || hasFileSpec(words) || PLAIN_WORDS_NO_FILES.has(program);
  const by = renderWords(words.slice(0, 2));
  let mentioned = state.analysis.files.filter((file) => file.mentioned === true).length;
  for (const word of words.slice(1)) {
    if (!word.isStatic || word.processSubstitution === true || /\s/.test(word.value)) continue;
    if (options.files.has(word.value)) continue;
    if (onlyFileShapes && !/^(@|file:|-{1,2}[A-Za-z0-9][A-Za-z0-9-]*=)/i.test(word.value)) continue;
    const value = word.value
      .replace(/^-{1,2}[A-Za-z0-9][A-Za-z0-9-]*=/, '')
      // `-o.git/hooks/x`, `out=.git/hooks/x`: a value attached to a short option or a name.
      .replace(/^-[A-Za-z](?=[./~])/, '')
      .replace(/^[A-Za-z_][A-Za-z0-9_]*=/, '')
      .replace(/^@/, '')
      .replace(/^file:(\/\/)?/i, '');
    if (value === '' || value.startsWith('-') || /^[a-z][a-z0-9+.-]*:\/\//i.test(value)) continue;
    if (!looksLikeFile(value)) continue;
    if (mentioned >= MAX_MENTIONS) return;
    mentioned += 1;
    for (const single of word.expansions ?? [value]) {
      state.analysis.files.push({
        access: 'read',
        path: { value: single, isStatic: true, hasGlob: false },
        via: options.via,
        by,
        bases: state.directories,
        mentioned: true,
      });
    }
  }
}

/**
 * A word that names a file rather than a branch, a package or a directory of code: a component
 * that is a dotfile (`.env`, `.git/hooks/x`), a last component with an extension (`x.txt`), or a
 * path from `/` or `~`. Patterns (`*.ts` for find -name) name no file of their own.
 */
function looksLikeFile(value: string): boolean {
  if (/[*?[]/.test(value)) return false;
  const parts = value.split('/').filter((part) => part !== '' && !/^\.{1,3}$/.test(part));
  if (parts.length === 0) return false;
  if (/^[/~]/.test(value)) return true;
  return parts.some((part) => part.startsWith('.')) || /\.\w+$/.test(parts.at(-1) as string);
}

/**
 * What a command's arguments do: options that make it run code the line does not show, the files
 * it reads and writes, a program it reads from a pipe. Returns the words it took as files.
 */
export function recordArguments(
  state: AnalysisState,
  words: readonly ShellWord[],
  options: { via: string[] },
): ReadonlySet<string> {
  recordCodeOptions(state, words);
  const files = recordFileArguments(state, words, options);
  if (runsProgramFromPipe(words)) {
    addProblem(
      state,
      `${programName((words[0] as ShellWord).value)} runs a program made when the line runs, which no rule sees`,
    );
  }
  return files;
}

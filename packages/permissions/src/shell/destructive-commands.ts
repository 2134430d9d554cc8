import type { SimpleCommand } from './analysis-state.ts';
import { withoutGlobalOptions } from './global-options.ts';
import { programName } from './program-name.ts';
import type { ShellWord } from './shell-words.ts';

/**
 * A command that destroys what it touches (files, history, processes) beyond an easy undo. An
 * "always" or "session" answer saves such a command only as its exact line, never as the wider
 * pattern of its action (`rm *` would let the model delete anything after one approved `rm x`),
 * and nothing at all when even the exact line does not say what it will destroy.
 */
export type DestructiveCommand = {
  /** The class as people name it: `rm`, `git push --force`. */
  name: string;
  /** What it does that cannot be undone, after its name: `deletes files for good`. */
  harm: string;
  /**
   * Why not even the exact line may be saved: what it destroys is only known when the line runs
   * (a variable, `$(…)`, arguments from xargs, files find selects), or it writes a device.
   * Undefined when the exact line may be saved.
   */
  unsavable?: string;
};

/** A command's words after its name (and for git, after its global options and sub-command). */
type Arguments = {
  words: readonly ShellWord[];
  /** Letters of short option clusters before `--`: `-rf` gives r and f. */
  short: ReadonlySet<string>;
  /** Long options before `--`, without their `=value`: `--force-with-lease=x` gives `--force-with-lease`. */
  long: ReadonlySet<string>;
  /** Words that are not options (after `--`, everything). */
  operands: readonly ShellWord[];
  /** Whether a `--` ends the options. */
  endOfOptions: boolean;
};

function readArguments(words: readonly ShellWord[]): Arguments {
  const short = new Set<string>();
  const long = new Set<string>();
  const operands: ShellWord[] = [];
  let endOfOptions = false;
  for (const word of words) {
    const text = word.value;
    if (endOfOptions || !word.isStatic || !text.startsWith('-') || text === '-') {
      operands.push(word);
    } else if (text === '--') {
      endOfOptions = true;
    } else if (text.startsWith('--')) {
      long.add(text.split('=', 1)[0] as string);
    } else {
      for (const letter of text.slice(1)) short.add(letter);
    }
  }
  return { words, short, long, operands, endOfOptions };
}

/** One class of the table: a program (and for git a sub-command) and, when not every call is, which calls are. */
type DestructiveClass = {
  /** How notes name it; a class of several programs (`program` a pattern) is named by the one the line runs. */
  name: string;
  harm: string;
  program: string | RegExp;
  subcommand?: string;
  when?: (args: Arguments) => boolean;
};

const has = (args: Arguments, options: { short?: string; long?: readonly string[] }): boolean =>
  [...(options.short ?? '')].some((letter) => args.short.has(letter)) ||
  (options.long ?? []).some((name) => args.long.has(name));

/** `kill -9`, `-KILL`, `-SIGKILL`, `-s KILL`, `-s 9`, `--signal=KILL`, `-n 9`. */
function sendsKill(args: Arguments): boolean {
  const words = args.words.map((word) => word.value);
  const isKill = (signal: string | undefined) => signal !== undefined && /^(9|(SIG)?KILL)$/i.test(signal);
  return words.some(
    (word, index) =>
      /^-(9|(SIG)?KILL)$/i.test(word) ||
      (['-s', '-n', '--signal'].includes(word) && isKill(words[index + 1])) ||
      /^--signal=(9|(SIG)?KILL)$/i.test(word) ||
      /^-[sn](9|(SIG)?KILL)$/i.test(word),
  );
}

/**
 * The destructive commands, as the README lists them. A class with `when` covers only the calls it
 * names (a plain `git push` or `chmod 644 x` keeps its wider pattern); flags are read as written,
 * in any spelling the program takes (`-rf`, `-fr`, `-R`, `--recursive`, clusters like `-vfR`).
 */
const DESTRUCTIVE_CLASSES: readonly DestructiveClass[] = [
  { name: 'rm', program: 'rm', harm: 'deletes files for good' },
  { name: 'rmdir', program: 'rmdir', harm: 'deletes directories' },
  { name: 'unlink', program: 'unlink', harm: 'deletes a file for good' },
  { name: 'shred', program: 'shred', harm: 'overwrites files so that they cannot be recovered' },
  { name: 'truncate', program: 'truncate', harm: "cuts files to a size, dropping what's beyond it" },
  {
    name: 'dd of=',
    program: 'dd',
    harm: 'overwrites its output file or device',
    when: (args) => args.operands.some((word) => word.value.startsWith('of=')),
  },
  {
    name: 'mkfs',
    program: /^(mkfs(\..+)?|mke2fs|mkswap|wipefs)$/,
    harm: 'erases what a disk or image held',
  },
  {
    // mv replaces an existing destination without asking (no terminal to prompt on), and the
    // source's name is gone: only -n / --no-clobber / --update=none keep the destination.
    name: 'mv',
    program: 'mv',
    harm: 'replaces an existing destination without asking',
    when: (args) =>
      !has(args, { short: 'n', long: ['--no-clobber'] }) && !args.words.some((word) => word.value === '--update=none'),
  },
  {
    // chmod's modes are letters too (`-rwx`), but never an upper-case R.
    name: 'chmod -R',
    program: 'chmod',
    harm: 'changes the permissions of everything under a directory',
    when: (args) => has(args, { short: 'R', long: ['--recursive'] }),
  },
  {
    name: 'chown -R',
    program: 'chown',
    harm: 'changes the owner of everything under a directory',
    when: (args) => has(args, { short: 'R', long: ['--recursive'] }),
  },
  {
    name: 'chgrp -R',
    program: 'chgrp',
    harm: 'changes the group of everything under a directory',
    when: (args) => has(args, { short: 'R', long: ['--recursive'] }),
  },
  {
    name: 'find -delete',
    program: 'find',
    harm: 'deletes every file it finds',
    when: (args) => args.words.some((word) => word.value === '-delete'),
  },
  {
    name: 'rsync --delete',
    program: 'rsync',
    harm: 'deletes files the source does not have (or the source files it sent)',
    when: (args) => [...args.long].some((name) => name.startsWith('--delete') || name === '--remove-source-files'),
  },
  { name: 'kill -9', program: 'kill', harm: 'kills a process without letting it clean up', when: sendsKill },
  { name: 'pkill', program: 'pkill', harm: 'kills every process whose name matches' },
  { name: 'killall', program: 'killall', harm: 'kills every process of that name' },
  {
    // `+main` forces one ref, `:main` (an empty source) deletes it; --mirror and --prune delete too.
    name: 'git push --force',
    program: 'git',
    subcommand: 'push',
    harm: "overwrites or deletes the remote's history",
    when: (args) =>
      has(args, {
        short: 'fd',
        long: ['--force', '--force-with-lease', '--force-if-includes', '--delete', '--mirror', '--prune'],
      }) || args.operands.some((word) => /^[+:]/.test(word.value)),
  },
  {
    name: 'git reset --hard',
    program: 'git',
    subcommand: 'reset',
    harm: 'throws away uncommitted changes',
    when: (args) => args.long.has('--hard'),
  },
  {
    name: 'git clean -f',
    program: 'git',
    subcommand: 'clean',
    harm: 'deletes untracked files for good',
    when: (args) => has(args, { short: 'f', long: ['--force'] }),
  },
  {
    name: 'git branch -D',
    program: 'git',
    subcommand: 'branch',
    harm: 'deletes a branch even when its commits are merged nowhere',
    when: (args) =>
      args.short.has('D') ||
      (has(args, { short: 'd', long: ['--delete'] }) && has(args, { short: 'f', long: ['--force'] })),
  },
  {
    name: 'git checkout',
    program: 'git',
    subcommand: 'checkout',
    harm: 'throws away uncommitted changes',
    when: (args) => has(args, { short: 'f', long: ['--force'] }) || args.endOfOptions || isDot(args),
  },
  {
    // `git restore --staged x` only unstages; restoring the working tree throws changes away.
    name: 'git restore',
    program: 'git',
    subcommand: 'restore',
    harm: 'throws away uncommitted changes',
    when: (args) => !has(args, { short: 'S', long: ['--staged'] }) || has(args, { short: 'W', long: ['--worktree'] }),
  },
  {
    name: 'git stash drop',
    program: 'git',
    subcommand: 'stash',
    harm: 'throws away stashed changes',
    when: (args) => ['drop', 'clear'].includes(args.operands[0]?.value ?? ''),
  },
];

function isDot(args: Arguments): boolean {
  return args.operands.some((word) => word.value === '.' || word.value === './');
}

/** Devices a command may name without destroying anything. */
const HARMLESS_DEVICES = /^\/dev\/(null|zero|u?random|stdin|stdout|stderr|tty|fd\/\d+)$/;

/** Why even the exact line is not safe to save, or undefined when it is. */
function unsavable(command: SimpleCommand): string | undefined {
  if (command.derived === true || command.via.some((via) => via === 'xargs' || via === 'parallel')) {
    return 'what it acts on is only known when the line runs';
  }
  if (command.words.some((word) => !word.isStatic || word.unbounded !== undefined)) {
    return 'what it acts on is only known when the line runs';
  }
  if (
    command.words.some(
      (word) => /^(of=)?\/dev\//.test(word.value) && !HARMLESS_DEVICES.test(word.value.replace(/^of=/, '')),
    )
  ) {
    return 'this line aims it at a device';
  }
  return undefined;
}

/** The class of a command's words, if one of the table's, named as the command names it (`mkfs.ext4`, `wipefs`). */
function classOf(words: readonly ShellWord[]): { name: string; harm: string } | undefined {
  const first = words[0];
  if (first === undefined || !first.isStatic) return undefined;
  const program = programName(first.value);
  const named = [{ ...first, value: program }, ...words.slice(1)];
  const bare = withoutGlobalOptions(named, program) ?? named;
  for (const entry of DESTRUCTIVE_CLASSES) {
    const programMatches = typeof entry.program === 'string' ? entry.program === program : entry.program.test(program);
    if (!programMatches) continue;
    let rest = bare.slice(1);
    if (entry.subcommand !== undefined) {
      if (rest[0]?.value !== entry.subcommand) continue;
      rest = rest.slice(1);
    }
    if (entry.when !== undefined && !entry.when(readArguments(rest))) continue;
    return { name: typeof entry.program === 'string' ? entry.name : program, harm: entry.harm };
  }
  return undefined;
}

/**
 * Whether a simple command (wherever the line hides it: a pipe, `&&`, `$(…)`, `bash -c`, `sudo`,
 * `xargs`, `find -exec`) is destructive, and whether its exact line may be saved. `find -delete`'s
 * derived `rm -rf` belongs to `find -delete`. Redirections are not commands here (a file write is
 * already saved only for exactly that file).
 */
export function findDestructiveCommand(command: SimpleCommand): DestructiveCommand | undefined {
  if (command.redirect === true || command.opaque !== undefined) return undefined;
  const found =
    command.derived === true
      ? DESTRUCTIVE_CLASSES.find((entry) => entry.name === 'find -delete')
      : classOf(command.words);
  if (found === undefined) return undefined;
  const why = unsavable(command);
  return { name: found.name, harm: found.harm, ...(why === undefined ? {} : { unsavable: why }) };
}

/** `a`, `a and b`, `a, b and c`. */
function listed(parts: readonly string[]): string {
  return parts.length <= 1 ? (parts[0] ?? '') : `${parts.slice(0, -1).join(', ')} and ${parts.at(-1)}`;
}

/**
 * The sentence an approval shows next to what "always" offers when the call runs destructive
 * commands: why the pattern is only the exact command, or why there is none.
 */
export function toAlwaysNote(found: readonly DestructiveCommand[], options: { offered: boolean }): string | undefined {
  const classes = [...new Map(found.map((entry) => [entry.name, entry])).values()];
  if (classes.length === 0) return undefined;
  const what = listed(classes.map((entry) => `${entry.name} ${entry.harm}`));
  if (options.offered) {
    const exact = found.length === 1 ? 'this exact command' : 'these exact commands';
    return `${what}, so "always" and "session" offer only ${exact}, never a wider pattern.`;
  }
  const why = found.find((entry) => entry.unsavable !== undefined)?.unsavable;
  if (why === undefined) return undefined;
  return `${what}, and ${why}, so "always" and "session" are not offered: approve it once.`;
}

import type { BashViewer } from './bash-view.ts';
import type { ShellParser } from './shell-parser.ts';
import { renderWords, type ShellWord, type WordContext } from './shell-words.ts';
import { type Assignment, judgeAssignment } from './variable-assignments.ts';

/** One simple command the line would run, found wherever it hides. */
export type SimpleCommand = {
  words: ShellWord[];
  /** The words as one line (static words unquoted and re-quoted only where needed). */
  text: string;
  /** The wrappers and payloads it was found in, outermost first: `['sudo', 'bash -c']`. */
  via: string[];
  /** Why the command's words cannot be judged: its name is only known when the line runs. */
  opaque?: string;
  /**
   * Set for an output redirection to a file (`> out.txt`, `>> ~/.bashrc`): a write the line does,
   * judged like a command whose words are the operator and the target.
   */
  redirect?: true;
  /**
   * Set for a command Molf derived rather than read (`find -delete` removes files as `rm -rf` does):
   * "always" saves only its exact line.
   */
  derived?: true;
  /**
   * Set when only a deny of this command counts, not its ask: a wrapper that changes nothing about
   * what runs (`timeout 5 npm test` is judged as `npm test`), or a command found by the rough scan of
   * a line the parser could not read (the line asks anyway).
   */
  onlyDeny?: true;
  /** Set when Molf found the commands it runs (a wrapper it knows): those are judged, it is not probed. */
  unwrapped?: true;
};

/** A file the line reads or writes: a redirection, or an argument of a command Molf understands. */
export type FileAccess = {
  access: 'read' | 'write';
  /** The path as the shell sees it (static, maybe a glob pattern). */
  path: ShellWord;
  via: string[];
  /** The command or redirection that does it. */
  by: string;
  /**
   * Set for a directory of which every file is read (`grep -r KEY src`), or every file but the
   * hidden ones (`visible`: `rg KEY`).
   */
  recursive?: 'all' | 'visible';
  /**
   * Set when the line certainly left the directory it started in (`cd src && cat x`: cat runs only
   * if the cd worked): a relative path is judged from `bases` alone.
   */
  leftStart?: true;
  /**
   * Set for a path-like argument of a command whose files Molf does not know (`python3 .env`,
   * `mkdir .git/hooks/x`): it may be read or written, so a deny of either asks.
   */
  mentioned?: true;
  /**
   * Directories an earlier `cd` (or `git -C`, `env -C`…) of the line may have moved to: a relative
   * path is judged from each of them too.
   */
  bases: string[];
};

export type ShellAnalysis = {
  commands: SimpleCommand[];
  files: FileAccess[];
  /** Reasons the line cannot be fully understood; any of them makes the line at most `ask`. */
  problems: string[];
};

export type ShellAnalysisLimits = {
  /** Longer lines are not parsed at all (only scanned for denied commands). */
  maxSourceChars: number;
  /** Parsing of one line and its payloads together is cancelled after this (by `now`). */
  parseTimeoutMs: number;
  /** No payload (`bash -c '…'`) is parsed after this (by `now`); what was parsed is still read to its end. */
  analysisTimeoutMs: number;
  /**
   * The clock the time limits are measured by, in milliseconds. Default: `performance.now()`. Tests
   * inject a fake one, so that no verdict depends on how busy the machine is.
   */
  now: () => number;
  /** Syntax nodes per line, all payloads together; more makes the line ask. */
  maxNodes: number;
  /** Simple commands per line; more makes the line ask (all of them are still checked for deny). */
  maxCommands: number;
  /** Wrappers and payloads inside each other (`sudo bash -c "env sh -c '…'"`). */
  maxNesting: number;
  /** Files a line reads or writes (loop values and brace expansions count each); more asks. */
  maxFiles: number;
  /** Directories a line moves to (`cd`, `git -C`); more asks, and its files are judged from the first ones. */
  maxDirectories: number;
};

/**
 * The bounds that keep one evaluation cheap whatever the model sends. A line over any of them is
 * `ask`; the commands already found are still checked for deny.
 */
export const SHELL_ANALYSIS_LIMITS: Readonly<ShellAnalysisLimits> = {
  maxSourceChars: 128 * 1024,
  parseTimeoutMs: 50,
  analysisTimeoutMs: 100,
  now: () => performance.now(),
  maxNodes: 100_000,
  maxCommands: 256,
  maxNesting: 8,
  maxFiles: 1_024,
  maxDirectories: 8,
};

/** A `for NAME in a b c` loop: inside it, `"$NAME"` is one of those words. */
export type LoopBinding = { source: string; name: string; values: ShellWord[]; start: number; end: number };

/** Where a command stands: the source it was parsed from and its offset, for loops around it. */
export type SourcePosition = { source: string; at: number };

/** A stretch of one source. */
export type SourceRange = { source: string; start: number; end: number };

/**
 * The state of one line's analysis, shared by its parts. The parts add what they find to it; what a
 * command or a piece of code runs in turn they return (`InnerRun`), and only the analyser follows it.
 */
export type AnalysisState = {
  parser: ShellParser;
  context: WordContext;
  limits: ShellAnalysisLimits;
  parseDeadline: number;
  analysisDeadline: number;
  nodes: number;
  analysis: ShellAnalysis;
  view: BashViewer;
  loops: LoopBinding[];
  /** Where the command being recorded stands (a wrapped command stands where its wrapper does). */
  position: SourcePosition | undefined;
  /** Directories the line may have changed to so far (`cd x`, `git -C x`): relative paths are judged from each. */
  directories: string[];
  /** Where the line certainly is no longer in its start directory: after `cd x &&`, to the end of that chain. */
  awayFromStart: SourceRange[];
};

export function addProblem(state: AnalysisState, problem: string): void {
  if (!state.analysis.problems.includes(problem)) state.analysis.problems.push(problem);
}

/** Why a line asks when wrappers and payloads stand inside each other deeper than `maxNesting`. */
export function nestingProblem(limits: ShellAnalysisLimits): string {
  return `commands are wrapped more than ${limits.maxNesting} levels deep`;
}

export const NAME_PROBLEM = 'bash may read a word as a variable name, and a subscript in a name can run commands';

/** `'a[$(rm x)]'`: once bash reads it as a variable name (`printf -v`, `read`, `[ -v ]`…), it runs. */
export const SUBSCRIPT_WITH_CODE = /\[[^\]]*(\$\(|`)/;

/** Judges one assignment; a variable assigned again no longer holds only its loop's words. */
export function judge(state: AnalysisState, assignment: Assignment): void {
  const problem = judgeAssignment(assignment);
  if (problem !== undefined) addProblem(state, problem);
  state.loops = state.loops.filter((loop) => loop.name !== assignment.name);
}

/** Records one command. Past the command limit the line asks, but every command is still kept for deny. */
export function pushCommand(
  state: AnalysisState,
  options: { words: ShellWord[]; via: string[]; derived?: boolean | undefined; onlyDeny?: boolean | undefined },
): SimpleCommand {
  if (state.analysis.commands.length === state.limits.maxCommands) {
    addProblem(state, `the command has more than ${state.limits.maxCommands} simple commands`);
  }
  const { words, via } = options;
  const command: SimpleCommand = {
    words,
    text: renderWords(words),
    via,
    ...(options.derived === true ? { derived: true as const } : {}),
    ...(options.onlyDeny === true ? { onlyDeny: true as const } : {}),
  };
  const name = words[0] as ShellWord;
  const nameAt = name.value === 'printf' ? words.findIndex((word) => word.value === '-v') + 1 : 0;
  const printsToName = words[nameAt];
  if (
    words.some((word) => word.isStatic && SUBSCRIPT_WITH_CODE.test(word.value)) ||
    (nameAt > 0 && printsToName !== undefined && (!printsToName.isStatic || printsToName.value.includes('[')))
  ) {
    addProblem(state, NAME_PROBLEM);
  }
  if (!name.isStatic) {
    command.opaque = `the command name ${name.value} is only known when the line runs`;
  } else if (name.hasGlob) {
    command.opaque = `the command name ${name.value} is a pattern the shell expands`;
  } else if (name.value === '') {
    command.opaque = 'the command name is empty';
  } else {
    const unbounded = words.find((word) => word.unbounded !== undefined)?.unbounded;
    if (unbounded !== undefined) command.opaque = unbounded;
  }
  state.analysis.commands.push(command);
  return command;
}

import { Chalk, type ChalkInstance } from 'chalk';

/** How many colours a stream shows: none, 16, 256 or 16 million (chalk's levels). */
export type ColorLevel = 0 | 1 | 2 | 3;

/** What a colour decision needs of an output stream (a `tty.WriteStream` has all of it). */
export type ColorStream = { isTTY?: boolean; getColorDepth?: () => number };

/**
 * The colour level of `stream`: none with `NO_COLOR` (set and not empty, as no-color.org says),
 * whatever else is set; `FORCE_COLOR` forces colour on a pipe too (`0`/`false` turn it off, `2` and `3`
 * ask for 256 and 16 million colours); otherwise colour only on a terminal that is not `dumb`, as many
 * as it reports.
 */
export function colorLevel(stream: ColorStream, env: NodeJS.ProcessEnv = process.env): ColorLevel {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return 0;
  const force = env.FORCE_COLOR;
  if (force !== undefined) {
    if (force === '0' || force === 'false') return 0;
    if (force === '2' || force === '3') return Number(force) as ColorLevel;
    return Math.max(1, depthLevel(stream)) as ColorLevel;
  }
  if (stream.isTTY !== true || env.TERM === 'dumb') return 0;
  return depthLevel(stream);
}

function depthLevel(stream: ColorStream): ColorLevel {
  if (stream.isTTY !== true) return 0;
  const depth = stream.getColorDepth?.() ?? 4;
  return depth >= 24 ? 3 : depth >= 8 ? 2 : depth >= 4 ? 1 : 0;
}

/** The CLI's colours by meaning, so that every part of it paints a role or a state the same way. */
export type TerminalStyle = {
  level: ColorLevel;
  /** The chalk instance at this level, for a library that takes one (marked-terminal). */
  chalk: ChalkInstance;
  /** A person's prompt. */
  user: (text: string) => string;
  /** A tool call's name and arguments. */
  tool: (text: string) => string;
  /** A tool call that succeeded, an approval given. */
  ok: (text: string) => string;
  /** A tool call that failed, an error, a denial. */
  fail: (text: string) => string;
  /** Something that asks for attention: an approval, a notice. */
  warn: (text: string) => string;
  /** Secondary text: hints, collapsed output, ids. */
  dim: (text: string) => string;
  bold: (text: string) => string;
  /** A unified diff's added and removed lines, and its hunk headers. */
  added: (text: string) => string;
  removed: (text: string) => string;
  hunk: (text: string) => string;
};

export function createTerminalStyle(level: ColorLevel): TerminalStyle {
  const chalk = new Chalk({ level });
  return {
    level,
    chalk,
    user: (text) => chalk.bold.cyan(text),
    tool: (text) => chalk.magenta(text),
    ok: (text) => chalk.green(text),
    fail: (text) => chalk.red(text),
    warn: (text) => chalk.yellow(text),
    dim: (text) => chalk.dim(text),
    bold: (text) => chalk.bold(text),
    added: (text) => chalk.green(text),
    removed: (text) => chalk.red(text),
    hunk: (text) => chalk.cyan(text),
  };
}

/** The style for `stream` as its terminal and the environment decide. */
export function styleFor(stream: ColorStream, env: NodeJS.ProcessEnv = process.env): TerminalStyle {
  return createTerminalStyle(colorLevel(stream, env));
}

import type { Node, TreeCursor } from 'web-tree-sitter';
import type { ShellParser } from './shell-parser.ts';
import {
  renderWords,
  type ShellWord,
  staticWord,
  toShellWord,
  toSimpleShellWord,
  type WordContext,
} from './shell-words.ts';
import { unwrapCommand } from './unwrap-command.ts';

/** One simple command the line would run, found wherever it hides. */
export type SimpleCommand = {
  words: ShellWord[];
  /** The words as one line (static words unquoted and re-quoted only where needed), plus redirects. */
  text: string;
  /** The wrappers and payloads it was found in, outermost first: `['sudo', 'bash -c']`. */
  via: string[];
  /** Why the command's words cannot be judged: its name is only known when the line runs. */
  opaque?: string;
};

export type ShellAnalysis = {
  commands: SimpleCommand[];
  /** Reasons the line cannot be fully understood; any of them makes the line at most `ask`. */
  problems: string[];
};

/**
 * The bounds that keep one evaluation cheap whatever the model sends. A line over any of them is
 * `ask` (its known commands are still checked for deny).
 */
export const SHELL_ANALYSIS_LIMITS = {
  /** Longer lines are not parsed at all. */
  maxSourceChars: 128 * 1024,
  /** Parsing of one line (all payloads together) is cancelled after this. */
  parseTimeoutMs: 50,
  /** Syntax nodes visited per line, all payloads together. */
  maxNodes: 100_000,
  /** Simple commands per line. */
  maxCommands: 256,
  /** Wrappers and payloads inside each other (`sudo bash -c "env sh -c '…'"`). */
  maxNesting: 8,
} as const;

/**
 * Variables that change which program runs or what it loads; setting one anywhere in a line
 * means its commands are not what they look like.
 */
const SENSITIVE_VARIABLES = new Set([
  'PATH',
  'LD_PRELOAD',
  'LD_LIBRARY_PATH',
  'LD_AUDIT',
  'BASH_ENV',
  'ENV',
  'IFS',
  'PS4',
  'PROMPT_COMMAND',
  'SHELLOPTS',
  'BASHOPTS',
  'CDPATH',
  'NODE_OPTIONS',
  'NODE_PATH',
  'PYTHONPATH',
  'PYTHONSTARTUP',
  'PYTHONHOME',
  'PERL5OPT',
  'PERL5LIB',
  'RUBYOPT',
  'RUBYLIB',
  'JAVA_TOOL_OPTIONS',
  '_JAVA_OPTIONS',
  'GIT_SSH',
  'GIT_SSH_COMMAND',
  'GIT_EXEC_PATH',
  'GIT_EDITOR',
  'GIT_PAGER',
  'GIT_ASKPASS',
  'GIT_CONFIG_GLOBAL',
  'GIT_CONFIG_SYSTEM',
  'GIT_CONFIG_PARAMETERS',
  'PAGER',
  'EDITOR',
  'VISUAL',
  'SSH_ASKPASS',
  'SUDO_ASKPASS',
]);

function isSensitiveVariable(name: string): boolean {
  return SENSITIVE_VARIABLES.has(name) || name.startsWith('DYLD_') || name.startsWith('GIT_CONFIG_');
}

export type AnalysisState = {
  parser: ShellParser;
  context: WordContext;
  deadline: number;
  nodes: number;
  analysis: ShellAnalysis;
};

function addProblem(state: AnalysisState, problem: string): void {
  if (!state.analysis.problems.includes(problem)) state.analysis.problems.push(problem);
}

/**
 * Every simple command in a bash line: through pipelines, lists, subshells, `$(…)`, backticks,
 * process substitution, heredoc bodies, functions and control flow, and into the payloads of
 * `bash -c`, `eval`, `xargs`, `find -exec`, `sudo`, `env`, `timeout`… Pure apart from the parser.
 */
export function analyzeShellLine(
  parser: ShellParser,
  source: string,
  options: { home?: string | undefined } = {},
): ShellAnalysis {
  const state: AnalysisState = {
    parser,
    context: { home: options.home },
    deadline: performance.now() + SHELL_ANALYSIS_LIMITS.parseTimeoutMs,
    nodes: 0,
    analysis: { commands: [], problems: [] },
  };
  analyzeSource(state, { source, via: [], nesting: 0 });
  if (state.analysis.commands.length === 0 && state.analysis.problems.length === 0 && source.trim() !== '') {
    // Nothing runs (a comment, a bare assignment): still never silently allowed by omission.
    const onlyComments = source.split('\n').every((line) => line.trim() === '' || line.trim().startsWith('#'));
    if (!onlyComments) addProblem(state, 'the line runs no command Molf can name');
  }
  return state.analysis;
}

export function analyzeSource(state: AnalysisState, options: { source: string; via: string[]; nesting: number }): void {
  const { source, via, nesting } = options;
  if (source.length > SHELL_ANALYSIS_LIMITS.maxSourceChars) {
    addProblem(state, `the command is longer than ${SHELL_ANALYSIS_LIMITS.maxSourceChars} characters`);
    return;
  }
  const remaining = state.deadline - performance.now();
  const tree = remaining > 0 ? state.parser.parse(source, { timeoutMs: remaining }) : undefined;
  if (tree === undefined) {
    addProblem(state, `parsing took longer than ${SHELL_ANALYSIS_LIMITS.parseTimeoutMs} ms`);
    return;
  }
  try {
    if (tree.rootNode.hasError) addProblem(state, 'the shell parser could not fully understand the command');
    walk(state, tree.rootNode, via, nesting);
  } finally {
    tree.delete();
  }
}

function walk(state: AnalysisState, root: Node, via: string[], nesting: number): void {
  state.nodes += root.descendantCount;
  if (state.nodes > SHELL_ANALYSIS_LIMITS.maxNodes) {
    addProblem(state, `the command has more than ${SHELL_ANALYSIS_LIMITS.maxNodes} syntax nodes`);
    return;
  }
  // A native query finds the nodes; walking the tree from JavaScript costs more than the parse.
  const captures = state.parser.statements.captures(root);
  const redirectsOf = new Map<number, string>();
  for (const { name, node } of captures) {
    if (name === 'redirected') visit(state, node, { type: 'redirected_statement', redirectsOf, via, nesting });
  }
  for (const { name, node } of captures) {
    if (name === 'command') {
      const cursor = node.walk();
      try {
        collectCommand(state, cursor, { redirects: redirectsOf.get(node.id) ?? '', via, nesting });
      } finally {
        cursor.delete();
      }
    } else if (name === 'declaration') {
      visit(state, node, { type: 'declaration_command', redirectsOf, via, nesting });
    } else if (name === 'assignment') {
      visit(state, node, { type: 'variable_assignment', redirectsOf, via, nesting });
    }
  }
}

function visit(
  state: AnalysisState,
  node: Node,
  options: { type: string; redirectsOf: Map<number, string>; via: string[]; nesting: number },
): void {
  const { redirectsOf, via, nesting } = options;
  switch (options.type) {
    case 'redirected_statement': {
      const body = node.childForFieldName('body');
      if (body?.type === 'command') {
        const redirects = node.children
          .filter((child) => child !== null && child.id !== body.id)
          .map((child) => child?.text ?? '');
        redirectsOf.set(body.id, redirects.join(' '));
      }
      return;
    }
    case 'declaration_command':
    case 'unset_command': {
      const words = node.children
        .filter((child): child is Node => child !== null && child.type !== 'comment')
        .map((child, index) => (index === 0 ? staticWord(child.text) : toShellWord(child, state.context)));
      pushCommand(state, { words, redirects: '', via });
      return;
    }
    case 'variable_assignment': {
      const name = node.childForFieldName('name')?.text ?? '';
      if (isSensitiveVariable(name)) addProblem(state, `it sets ${name}, which changes what the commands run`);
      return;
    }
    default:
      return;
  }
}

/** The word under the cursor; simple words are read without building node objects. */
function wordAt(state: AnalysisState, cursor: TreeCursor): ShellWord {
  switch (cursor.nodeType) {
    case 'word':
    case 'number':
    case 'raw_string':
      return toSimpleShellWord(cursor.nodeType, cursor.nodeText, state.context);
    default:
      return toShellWord(cursor.currentNode, state.context);
  }
}

/** Reads the command under the cursor (and leaves the cursor where it was). */
function collectCommand(
  state: AnalysisState,
  cursor: TreeCursor,
  options: { redirects: string; via: string[]; nesting: number },
): void {
  const words: ShellWord[] = [];
  const redirects: string[] = options.redirects === '' ? [] : [options.redirects];
  if (cursor.gotoFirstChild()) {
    do {
      const type = cursor.nodeType;
      if (type === 'variable_assignment' || type === 'comment') continue;
      const field = cursor.currentFieldName;
      if (field === 'name') {
        // command_name wraps the word itself.
        if (cursor.gotoFirstChild()) {
          words.push(wordAt(state, cursor));
          cursor.gotoParent();
        } else {
          words.push(wordAt(state, cursor));
        }
      } else if (field === 'argument') {
        words.push(wordAt(state, cursor));
      } else {
        redirects.push(cursor.nodeText);
      }
    } while (cursor.gotoNextSibling());
    cursor.gotoParent();
  }
  if (words.length === 0) return;
  const command = pushCommand(state, { words, redirects: redirects.join(' '), via: options.via });
  if (command !== undefined && command.opaque === undefined) {
    unwrapCommand(state, { words, via: options.via, nesting: options.nesting });
  }
}

/** Records one command; undefined when the per-line command limit is reached. */
export function pushCommand(
  state: AnalysisState,
  options: { words: ShellWord[]; redirects: string; via: string[] },
): SimpleCommand | undefined {
  if (state.analysis.commands.length >= SHELL_ANALYSIS_LIMITS.maxCommands) {
    addProblem(state, `the command has more than ${SHELL_ANALYSIS_LIMITS.maxCommands} simple commands`);
    return undefined;
  }
  const { words, redirects, via } = options;
  const rendered = renderWords(words);
  const command: SimpleCommand = {
    words,
    text: redirects === '' ? rendered : `${rendered} ${redirects}`,
    via,
  };
  const name = words[0] as ShellWord;
  if (!name.isStatic) {
    command.opaque = `the command name ${name.value} is only known when the line runs`;
  } else if (name.hasGlob) {
    command.opaque = `the command name ${name.value} is a file-name pattern`;
  } else if (name.value === '') {
    command.opaque = 'the command name is empty';
  }
  state.analysis.commands.push(command);
  return command;
}

export { addProblem as addAnalysisProblem };

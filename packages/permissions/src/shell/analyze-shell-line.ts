import type { Node } from 'web-tree-sitter';
import {
  type AnalysisState,
  addProblem,
  judge,
  NAME_PROBLEM,
  nestingProblem,
  pushCommand,
  SHELL_ANALYSIS_LIMITS,
  type ShellAnalysis,
  type ShellAnalysisLimits,
  type SimpleCommand,
  type SourcePosition,
} from './analysis-state.ts';
import { ARITHMETIC_PROBLEM, arithmeticOperands, readsRunTimeValue, testsVariableName } from './arithmetic.ts';
import { createBashViewer } from './bash-view.ts';
import { builtinCallbacksOf } from './builtin-callbacks.ts';
import { recordArguments, recordMentions, recordShellEffects } from './command-effects.ts';
import { assignmentOf, commandWords } from './command-words.ts';
import type { InnerRun } from './inner-run.ts';
import { findStructureProblem } from './parsed-structure.ts';
import { programName } from './program-name.ts';
import { findFedPrograms, findFedStatement, visitFileRedirect } from './redirections.ts';
import type { ShellParser } from './shell-parser.ts';
import { renderWords, type ShellWord, staticWord, toShellWord, toVisible } from './shell-words.ts';
import { readsProgramFromStdin } from './stdin-programs.ts';
import { findHeredocCode, visitUnparsedCode } from './unparsed-code.ts';
import { unwrapCommand } from './unwrap-command.ts';
import { TRANSPARENT_WRAPPERS } from './wrapper-tables.ts';

export {
  type FileAccess,
  SHELL_ANALYSIS_LIMITS,
  type ShellAnalysis,
  type ShellAnalysisLimits,
  type SimpleCommand,
} from './analysis-state.ts';

/**
 * Every simple command in a bash line: through pipelines, lists, subshells, `$(…)`, backticks,
 * process substitution, heredoc bodies, functions and control flow, and into the payloads of
 * `bash -c`, `eval`, `xargs`, `find -exec`, `sudo`, `env`, `timeout`…; plus the files it reads and
 * writes through redirections and the arguments of commands Molf understands. Pure apart from the parser.
 */
export function analyzeShellLine(
  parser: ShellParser,
  source: string,
  options: { home?: string | undefined; limits?: Partial<ShellAnalysisLimits> | undefined } = {},
): ShellAnalysis {
  const limits = { ...SHELL_ANALYSIS_LIMITS, ...options.limits };
  const now = limits.now();
  const state: AnalysisState = {
    parser,
    context: { home: options.home },
    limits,
    parseDeadline: now + limits.parseTimeoutMs,
    analysisDeadline: now + limits.analysisTimeoutMs,
    nodes: 0,
    analysis: { commands: [], files: [], problems: [] },
    view: createBashViewer(),
    loops: [],
    position: undefined,
    directories: [],
    awayFromStart: [],
  };
  analyzeSource(state, { source, via: [], nesting: 0 });
  const { analysis } = state;
  if (analysis.commands.length === 0 && analysis.problems.length === 0 && source.trim() !== '') {
    // Nothing runs (a comment, a bare assignment): still never silently allowed by omission.
    const onlyComments = source.split('\n').every((line) => line.trim() === '' || line.trim().startsWith('#'));
    if (!onlyComments) addProblem(state, 'the line runs no command Molf can name');
  }
  if (state.view.changed()) restoreText(state);
  return analysis;
}

/** Puts the characters the bash view replaced back into every word and text. */
function restoreText(state: AnalysisState): void {
  const { restore } = state.view;
  const word = (shellWord: ShellWord): ShellWord => ({
    ...shellWord,
    value: restore(shellWord.value),
    ...(shellWord.expansions === undefined ? {} : { expansions: shellWord.expansions.map(restore) }),
  });
  for (const command of state.analysis.commands) {
    command.words = command.words.map(word);
    const [operator, target] = command.words;
    command.text =
      command.redirect === true && operator !== undefined && target !== undefined
        ? `${operator.value} ${renderWords([target])}`
        : renderWords(command.words);
  }
  for (const file of state.analysis.files) {
    file.path = word(file.path);
    file.by = toVisible(restore(file.by));
  }
}

/** Separators between commands, for the rough scan: operators, grouping, substitutions, newlines. */
const ROUGH_SEPARATORS = /[;&|()<>`\n{}]+/;
const ROUGH_ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*\+?=/;

/**
 * A line the parser could not read (too long, too slow, a syntax error) still asks, but a deny must
 * win: every stretch between separators, quotes dropped, is kept as a command only a deny of counts.
 */
function scanRoughly(state: AnalysisState, source: string, place: { via: string[]; nesting: number }): void {
  const seen = new Set<string>();
  for (const piece of source.split(ROUGH_SEPARATORS)) {
    const words = piece
      .replace(/['"\\$]/g, '')
      .split(/[ \t\v\f\r]+/)
      .filter((word) => word !== '');
    while (words.length > 0 && ROUGH_ASSIGNMENT.test(words[0] as string)) words.shift();
    if (words.length === 0) continue;
    const text = words.join(' ');
    if (seen.has(text)) continue;
    seen.add(text);
    // Recorded like any command (`sudo rm -rf x` is unwrapped), only for deny.
    record(state, {
      words: words.map(staticWord),
      via: [...place.via, 'rough scan'],
      nesting: place.nesting,
      onlyDeny: true,
    });
  }
}

const ANALYSIS_TIMEOUT_PROBLEM = (limits: ShellAnalysisLimits) =>
  `the analysis took longer than ${limits.analysisTimeoutMs} ms`;

function analyzeSource(state: AnalysisState, options: { source: string; via: string[]; nesting: number }): void {
  const { via, nesting } = options;
  const { limits } = state;
  if (options.source.length > limits.maxSourceChars) {
    addProblem(state, `the command is longer than ${limits.maxSourceChars} characters`);
    scanRoughly(state, options.source, options);
    return;
  }
  // Every way code reaches another parse (a wrapper, a substitution, a heredoc fed to a shell, a
  // builtin's callback) ends here at `maxNesting`: the bound holds however fast the clock runs.
  if (nesting > limits.maxNesting) {
    addProblem(state, nestingProblem(limits));
    scanRoughly(state, options.source, options);
    return;
  }
  // The line itself is always parsed; its payloads only while there is time.
  if (nesting > 0 && limits.now() > state.analysisDeadline) {
    addProblem(state, ANALYSIS_TIMEOUT_PROBLEM(limits));
    scanRoughly(state, options.source, options);
    return;
  }
  // A payload is text taken from a viewed line: put back what the view replaced before viewing it
  // again (`eval rm\ -rf\ x` hands eval the words `rm -rf x`).
  const viewed = state.view.view(nesting > 0 ? state.view.restore(options.source) : options.source);
  for (const problem of viewed.problems) addProblem(state, problem);
  const remaining = nesting === 0 ? limits.parseTimeoutMs : state.parseDeadline - limits.now();
  const tree = remaining > 0 ? state.parser.parse(viewed.source, { timeoutMs: remaining, now: limits.now }) : undefined;
  if (tree === undefined) {
    addProblem(state, `parsing took longer than ${limits.parseTimeoutMs} ms`);
    scanRoughly(state, options.source, options);
    return;
  }
  try {
    if (tree.rootNode.hasError) {
      addProblem(state, 'the shell parser could not fully understand the command');
      scanRoughly(state, options.source, options);
    } else {
      const problem = findStructureProblem(tree, viewed.source);
      if (problem !== undefined) addProblem(state, problem);
    }
    walk(state, tree.rootNode, { source: viewed.source, via, nesting });
  } finally {
    tree.delete();
  }
}

type Place = { source: string; via: string[]; nesting: number };

/** Where what was handed on comes from: the `via` and the nesting of what handed it on. */
type From = { via: string[]; nesting: number };

type RecordOptions = {
  words: ShellWord[];
  via: string[];
  nesting: number;
  /** Where the command stands in its source, when it was read from one (not handed on by a wrapper). */
  position?: SourcePosition;
  derived?: boolean;
  onlyDeny?: boolean;
};

/**
 * Records one command found in the line or handed on by a wrapper: what it changes about the shell,
 * the files it names, and what it runs in turn, followed here. Every command takes this path, so
 * `timeout 5 cat .env` is judged like `cat .env`.
 */
function record(state: AnalysisState, options: RecordOptions): SimpleCommand {
  const { words, via } = options;
  // A command a wrapper runs stands where the wrapper stands (for the loops around it).
  state.position = options.position ?? state.position;
  const onlyDeny = options.onlyDeny === true;
  const command = pushCommand(state, { words, via, derived: options.derived, onlyDeny });
  if (command.opaque !== undefined) return command;
  // A command only a deny counts for changes nothing about the shell the line's own rules judge,
  // but the files it touches are its own (`npx tee .git/config`).
  if (!onlyDeny) {
    follow(state, builtinCallbacksOf(words), options);
    recordShellEffects(state, words);
  }
  const files = recordArguments(state, words, { via });
  const before = state.analysis.commands.length;
  followWrapped(state, unwrapCommand(words), { via, nesting: options.nesting, onlyDeny });
  if (state.analysis.commands.length === before) {
    // A wrapper's words are its command's, which are recorded on their own.
    recordMentions(state, words, { via, files });
    return command;
  }
  command.unwrapped = true;
  if (TRANSPARENT_WRAPPERS.has(programName((words[0] as ShellWord).value))) command.onlyDeny = true;
  return command;
}

/**
 * Records or analyzes, in order and one level deeper, what a command or a piece of code handed on.
 * `maxNesting` bounds what wrappers run (`followWrapped`) and the code in a line's own words (its
 * finders stop there); any other code parsed again (a program a heredoc feeds a shell, a builtin's
 * callback) stops at the same bound in `analyzeSource`.
 */
function follow(state: AnalysisState, runs: readonly InnerRun[], from: From): void {
  for (const run of runs) followRun(state, run, from);
}

/** What a wrapper runs: wrappers inside wrappers end at `maxNesting`, and the line asks. */
function followWrapped(state: AnalysisState, runs: readonly InnerRun[], from: From & { onlyDeny: boolean }): void {
  for (const run of runs) {
    if (run.type !== 'problem' && from.nesting + 1 > state.limits.maxNesting) {
      addProblem(state, nestingProblem(state.limits));
      continue;
    }
    followRun(state, run, from);
  }
}

function followRun(state: AnalysisState, run: InnerRun, from: From & { onlyDeny?: boolean }): void {
  const nesting = from.nesting + 1;
  switch (run.type) {
    case 'problem':
      addProblem(state, run.problem);
      return;
    case 'command':
      record(state, {
        words: run.words,
        via: [...from.via, run.via],
        nesting,
        derived: run.derived === true,
        onlyDeny: from.onlyDeny === true || run.onlyDeny === true,
      });
      return;
    case 'line':
      analyzeSource(state, {
        source: run.source,
        via: run.via === undefined ? from.via : [...from.via, run.via],
        nesting,
      });
      return;
    case 'scan':
      scanRoughly(state, run.source, { via: from.via, nesting });
      return;
  }
}

function walk(state: AnalysisState, root: Node, place: Place): void {
  const { source, via } = place;
  state.nodes += root.descendantCount;
  if (state.nodes > state.limits.maxNodes) {
    addProblem(state, `the command has more than ${state.limits.maxNodes} syntax nodes`);
  }
  // A native query finds the nodes; walking the tree from JavaScript costs more than the parse.
  const captures = state.parser.statements.captures(root);
  // Commands whose standard input is a program a heredoc or here-string gives them (analyzed).
  const fed = new Set<number>();
  // Arithmetic nodes already walked (a `$(( ))` inside another is walked once).
  const walked = new Set<number>();
  for (const { name, node } of captures) {
    switch (name) {
      case 'redirected': {
        const statement = findFedStatement(state, node);
        if (statement !== undefined) {
          follow(state, statement.runs, place);
          fed.add(statement.commandId);
        }
        break;
      }
      case 'redirect':
        visitFileRedirect(state, node, via);
        break;
      case 'command':
        collectCommand(state, node, { ...place, fed: fed.has(node.id) });
        break;
      case 'declaration':
        visitDeclaration(state, node, place);
        break;
      case 'assignment':
        visitBareAssignment(state, node);
        break;
      case 'loopvar':
        judge(state, { name: node.text, value: undefined, hasValue: false, reach: 'shell' });
        bindLoopVariable(state, node, source);
        break;
      case 'heredoc':
        follow(state, findHeredocCode(state, node, place), place);
        break;
      case 'substitution':
      case 'expansion':
        follow(state, visitUnparsedCode(state, node, place), place);
        break;
      case 'comparison':
        if (testsVariableName(node)) addProblem(state, NAME_PROBLEM);
        break;
      default:
        break;
    }
    if (!state.analysis.problems.includes(ARITHMETIC_PROBLEM) && !walked.has(node.id)) {
      if (arithmeticOperands(name, node).some((operand) => readsRunTimeValue(operand, walked))) {
        addProblem(state, ARITHMETIC_PROBLEM);
      }
    }
  }
}

/** `for f in a b src/*.ts; do …`: inside the loop, `$f` is one of those words. */
function bindLoopVariable(state: AnalysisState, variable: Node, source: string): void {
  const loop = variable.parent;
  if (loop === null || loop.firstChild?.type !== 'for') return;
  const values = loop.childrenForFieldName('value').filter((value): value is Node => value !== null);
  const words = values.map((value) => toShellWord(value, state.context));
  if (words.length === 0 || words.some((word) => !word.isStatic || word.unbounded !== undefined)) return;
  state.loops.push({ source, name: variable.text, values: words, start: loop.startIndex, end: loop.endIndex });
}

const DECLARED = /^([A-Za-z_][A-Za-z0-9_]*)(\[[^\]]*\])?(\+?=(.*))?$/s;

/**
 * `export A=1 B`, `declare -x C=2`, `local d`, `readonly E=1`, `export "F=$x"`: the command, and
 * what it assigns (a quoted word is an assignment to bash as well). `unset` goes the way of any
 * command.
 */
function visitDeclaration(state: AnalysisState, node: Node, place: Place): void {
  const children = node.children.filter((child): child is Node => child !== null && child.type !== 'comment');
  const words = children.map((child, index) =>
    index === 0 ? staticWord(child.text) : toShellWord(child, state.context),
  );
  if (node.type === 'unset_command') {
    record(state, {
      words,
      via: place.via,
      nesting: place.nesting,
      position: { source: place.source, at: node.startIndex },
    });
    return;
  }
  pushCommand(state, { words, via: place.via });
  // `declare -x`, `-n`, `-i` (a cluster like `-gx` counts; `+x` takes the attribute away).
  const flags = words.slice(1).filter((word) => word.isStatic && /^-[A-Za-z]+$/.test(word.value));
  const hasFlag = (flag: string) => flags.some((word) => word.value.includes(flag));
  const exported = words[0]?.value === 'export' || hasFlag('x');
  const reach = exported ? 'environment' : 'shell';
  if (hasFlag('n')) addProblem(state, 'declare -n makes a name stand for another variable, which can run commands');
  const integer = hasFlag('i');
  children.slice(1).forEach((child, index) => {
    const word = words[index + 1] as ShellWord;
    if (child.type === 'variable_name') {
      judge(state, { name: child.text, value: undefined, hasValue: false, reach });
      return;
    }
    if (child.type === 'variable_assignment') {
      const assignment = assignmentOf(state, child);
      if (integer && /[A-Za-z_]/.test(assignment.value ?? 'x')) addProblem(state, ARITHMETIC_PROBLEM);
      judge(state, { ...assignment, reach });
      return;
    }
    if (word.isStatic && /^[-+]/.test(word.value)) return;
    const declared = word.isStatic ? DECLARED.exec(word.value) : null;
    if (declared === null) {
      addProblem(state, `${words[0]?.value} declares a variable whose name is only known when the line runs`);
      return;
    }
    if (declared[2] !== undefined && /[A-Za-z_$`]/.test(declared[2])) addProblem(state, ARITHMETIC_PROBLEM);
    const value = declared[4];
    if (integer && value !== undefined && /[A-Za-z_]/.test(value)) addProblem(state, ARITHMETIC_PROBLEM);
    judge(state, { name: declared[1] as string, value, hasValue: declared[3] !== undefined, reach });
  });
}

/** `NAME=value` as a statement of its own: a shell variable, which reaches programs only if exported. */
function visitBareAssignment(state: AnalysisState, node: Node): void {
  const parent = node.parent?.type;
  // Assignments before a command and in declarations are judged with them.
  if (parent === 'command' || parent === 'declaration_command') return;
  judge(state, { ...assignmentOf(state, node), reach: 'shell' });
}

/** The body of the heredoc whose redirect holds this command (`cat <<EOF | sh`), if any. */
function heredocAround(node: Node): Node | undefined {
  let current = node.parent;
  while (current !== null && current.type === 'pipeline') current = current.parent;
  if (current?.type !== 'heredoc_redirect') return undefined;
  return current.children.find((child) => child?.type === 'heredoc_body') ?? undefined;
}

/** Whether a command's standard input comes from a pipe or a file (not the worker's empty input). */
function readsInput(node: Node): boolean {
  const parent = node.parent;
  // `cat <<EOF | sh`: the parser puts the rest of the pipeline inside the heredoc redirect.
  if (heredocAround(node) !== undefined) return true;
  if (parent?.type === 'pipeline') return parent.firstNamedChild?.id !== node.id;
  if (parent?.type === 'redirected_statement') {
    if (parent.children.some((child) => child?.type === 'file_redirect' && child.child(0)?.type === '<')) return true;
    return readsInput(parent);
  }
  return false;
}

function collectCommand(state: AnalysisState, node: Node, place: Place & { fed: boolean }): void {
  const { words, hereString } = commandWords(state, node, place.source);
  if (words.length === 0) return;
  const command = record(state, {
    words,
    via: place.via,
    nesting: place.nesting,
    position: { source: place.source, at: node.startIndex },
  });
  // `cd src && …`: what follows in the chain runs only if the cd worked.
  const name = programName((words[0] as ShellWord).value);
  if ((name === 'cd' || name === 'pushd') && node.nextSibling?.type === '&&') {
    let chain = node.parent;
    while (chain?.parent?.type === 'list' && chain.parent.children.some((child) => child?.type === '&&')) {
      chain = chain.parent;
    }
    if (chain !== null) state.awayFromStart.push({ source: place.source, start: node.endIndex, end: chain.endIndex });
  }
  // `sh <<< 'cmd'`: the here-string stands inside the command node.
  let fed = place.fed;
  if (!fed && hereString) {
    const runs = findFedPrograms(state, node, node.children);
    follow(state, runs, place);
    fed = runs.length > 0;
  }
  // Walking up the tree is costly (the parser keeps no parent links): only for a shell or an interpreter.
  if (!readsProgramFromStdin(words)) return;
  // `cat <<EOF | sh`: the body most likely is what the shell runs; a deny in it wins.
  const heredoc = heredocAround(node);
  if (heredoc !== undefined) {
    analyzeSource(state, {
      source: heredoc.text,
      via: [...place.via, `${programName((words[0] as ShellWord).value)} <<`],
      nesting: place.nesting + 1,
    });
  }
  // `curl … | bash`, `python3 < x.py`: the program it runs is text no rule sees.
  if (command.opaque === undefined && !fed && readsInput(node)) {
    addProblem(
      state,
      `${programName((words[0] as ShellWord).value)} runs a program it reads from its input, which no rule sees`,
    );
  }
}

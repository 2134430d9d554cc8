import type { Node, TreeCursor } from 'web-tree-sitter';
import {
  type AnalysisState,
  addProblem,
  judge,
  NAME_PROBLEM,
  pushCommand,
  SHELL_ANALYSIS_LIMITS,
  type ShellAnalysis,
  type ShellAnalysisLimits,
  SUBSCRIPT_WITH_CODE,
} from './analysis-state.ts';
import { ARITHMETIC_PROBLEM, arithmeticOperands, readsRunTimeValue, testsVariableName } from './arithmetic.ts';
import { createBashViewer } from './bash-view.ts';
import { findStructureProblem } from './parsed-structure.ts';
import { recordCommand } from './record-command.ts';
import { isDescriptorWord, visitFedProgram, visitFileRedirect, visitRedirectedStatement } from './redirections.ts';
import type { ShellParser } from './shell-parser.ts';
import { renderWords, type ShellWord, staticWord, toShellWord, toSimpleShellWord, toVisible } from './shell-words.ts';
import { visitHeredocBody, visitUnparsedCode } from './unparsed-code.ts';
import { basename, readsProgramFromStdin } from './unwrap-command.ts';
import type { Assignment } from './variable-assignments.ts';

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
  const now = performance.now();
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
    analyze: (payload) => analyzeSource(state, payload),
    scan: (text) => scanRoughly(state, text.source, text),
    record: (command) => recordCommand(state, command),
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
    state.record({
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
  // The line itself is always parsed; its payloads only while there is time.
  if (nesting > 0 && performance.now() > state.analysisDeadline) {
    addProblem(state, ANALYSIS_TIMEOUT_PROBLEM(limits));
    scanRoughly(state, options.source, options);
    return;
  }
  // A payload is text taken from a viewed line: put back what the view replaced before viewing it
  // again (`eval rm\ -rf\ x` hands eval the words `rm -rf x`).
  const viewed = state.view.view(nesting > 0 ? state.view.restore(options.source) : options.source);
  for (const problem of viewed.problems) addProblem(state, problem);
  const remaining = nesting === 0 ? limits.parseTimeoutMs : state.parseDeadline - performance.now();
  const tree = remaining > 0 ? state.parser.parse(viewed.source, { timeoutMs: remaining }) : undefined;
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

function walk(state: AnalysisState, root: Node, place: Place): void {
  const { source, via, nesting } = place;
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
        const id = visitRedirectedStatement(state, node, { via, nesting });
        if (id !== undefined) fed.add(id);
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
        visitHeredocBody(state, node, { via, nesting });
        break;
      case 'substitution':
      case 'expansion':
        visitUnparsedCode(state, node, { via, nesting });
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
    state.record({
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

/** The name and static value of a `variable_assignment` node. */
function assignmentOf(state: AnalysisState, node: Node): Omit<Assignment, 'reach'> {
  const nameNode = node.childForFieldName('name');
  const name =
    nameNode?.type === 'subscript' ? (nameNode.childForFieldName('name')?.text ?? '') : (nameNode?.text ?? '');
  const valueNode = node.childForFieldName('value');
  if (SUBSCRIPT_WITH_CODE.test(valueNode?.text ?? '')) addProblem(state, NAME_PROBLEM);
  // `a=([k]=v)`: the keys of an indexed array are arithmetic.
  if (valueNode?.type === 'array' && /\[[^\]]*[A-Za-z_$`]/.test(valueNode.text)) addProblem(state, ARITHMETIC_PROBLEM);
  if (valueNode === null) return { name, value: '', hasValue: true };
  const value = toShellWord(valueNode, state.context);
  return { name, value: value.isStatic ? value.value : undefined, hasValue: true };
}

/** `NAME=value` as a statement of its own: a shell variable, which reaches programs only if exported. */
function visitBareAssignment(state: AnalysisState, node: Node): void {
  const parent = node.parent?.type;
  // Assignments before a command and in declarations are judged with them.
  if (parent === 'command' || parent === 'declaration_command') return;
  judge(state, { ...assignmentOf(state, node), reach: 'shell' });
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

function joinWords(left: ShellWord, right: ShellWord): ShellWord {
  const value = `${left.value}${right.value}`;
  if (left.isStatic && right.isStatic) return { value, isStatic: true, hasGlob: left.hasGlob || right.hasGlob };
  return { value, isStatic: false, hasGlob: false };
}

/** The words of a command node, its assignments judged, and whether a here-string stands in it. */
function commandWords(state: AnalysisState, node: Node, source: string): { words: ShellWord[]; hereString: boolean } {
  const words: ShellWord[] = [];
  let hereString = false;
  const cursor = node.walk();
  let wordEnd = -1;
  const pushWord = (word: ShellWord) => {
    // The parser reads `cat\<newline>chsegv` as two words; bash drops the line continuation and
    // runs `catchsegv`. Join them so rules see what bash runs.
    const previous = words[words.length - 1];
    if (
      previous !== undefined &&
      wordEnd !== -1 &&
      cursor.startIndex === wordEnd + 2 &&
      source.startsWith('\\\n', wordEnd)
    ) {
      words[words.length - 1] = joinWords(previous, word);
    } else {
      words.push(word);
    }
    wordEnd = cursor.endIndex;
  };
  try {
    if (!cursor.gotoFirstChild()) return { words, hereString };
    do {
      const type = cursor.nodeType;
      if (type === 'comment') continue;
      if (type === 'variable_assignment') {
        // `NAME=value cmd`: the value reaches cmd's environment.
        judge(state, { ...assignmentOf(state, cursor.currentNode), reach: 'environment' });
        continue;
      }
      const field = cursor.currentFieldName;
      if (field === 'name') {
        // command_name wraps the word itself.
        if (cursor.gotoFirstChild()) {
          const word = wordAt(state, cursor);
          cursor.gotoParent();
          pushWord(word);
        } else {
          pushWord(wordAt(state, cursor));
        }
      } else if (field === 'argument') {
        if (cursor.nodeType === 'number' && isDescriptorWord(cursor.currentNode)) continue;
        pushWord(wordAt(state, cursor));
      } else {
        hereString ||= cursor.nodeType === 'herestring_redirect';
        wordEnd = -1;
      }
    } while (cursor.gotoNextSibling());
    return { words, hereString };
  } finally {
    cursor.delete();
  }
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
  const command = state.record({
    words,
    via: place.via,
    nesting: place.nesting,
    position: { source: place.source, at: node.startIndex },
  });
  // `cd src && …`: what follows in the chain runs only if the cd worked.
  const name = basename((words[0] as ShellWord).value);
  if ((name === 'cd' || name === 'pushd') && node.nextSibling?.type === '&&') {
    let chain = node.parent;
    while (chain?.parent?.type === 'list' && chain.parent.children.some((child) => child?.type === '&&')) {
      chain = chain.parent;
    }
    if (chain !== null) state.awayFromStart.push({ source: place.source, start: node.endIndex, end: chain.endIndex });
  }
  // `sh <<< 'cmd'`: the here-string stands inside the command node.
  const fed = place.fed || (hereString && visitFedProgram(state, node, node.children, place));
  // Walking up the tree is costly (the parser keeps no parent links): only for a shell or an interpreter.
  if (!readsProgramFromStdin(words)) return;
  // `cat <<EOF | sh`: the body most likely is what the shell runs; a deny in it wins.
  const heredoc = heredocAround(node);
  if (heredoc !== undefined) {
    state.analyze({
      source: heredoc.text,
      via: [...place.via, `${basename((words[0] as ShellWord).value)} <<`],
      nesting: place.nesting + 1,
    });
  }
  // `curl … | bash`, `python3 < x.py`: the program it runs is text no rule sees.
  if (command.opaque === undefined && !fed && readsInput(node)) {
    addProblem(
      state,
      `${basename((words[0] as ShellWord).value)} runs a program it reads from its input, which no rule sees`,
    );
  }
}

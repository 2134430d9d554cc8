import type { Node, TreeCursor } from 'web-tree-sitter';
import { createBashViewer } from './bash-view.ts';
import { optionSet, readOptions } from './command-options.ts';
import { DEVICE_TARGETS, fileArgumentsOf } from './file-arguments.ts';
import { findStructureProblem } from './parsed-structure.ts';
import type { ShellParser } from './shell-parser.ts';
import {
  renderWords,
  type ShellWord,
  staticWord,
  toShellWord,
  toSimpleShellWord,
  toVisible,
  type WordContext,
} from './shell-words.ts';
import { basename, unwrapCommand } from './unwrap-command.ts';
import { type Assignment, judgeAssignment, setExportsAssignments } from './variable-assignments.ts';

/** One simple command the line would run, found wherever it hides. */
export type SimpleCommand = {
  words: ShellWord[];
  /** The words as one line (static words unquoted and re-quoted only where needed), plus redirects. */
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
};

/** A file the line reads or writes: a redirection, or an argument of a command Molf understands. */
export type FileAccess = {
  access: 'read' | 'write';
  /** The path as the shell sees it (static, maybe a glob pattern). */
  path: ShellWord;
  via: string[];
  /** The command or redirection that does it. */
  by: string;
};

export type ShellAnalysis = {
  commands: SimpleCommand[];
  files: FileAccess[];
  /** Reasons the line cannot be fully understood; any of them makes the line at most `ask`. */
  problems: string[];
};

export type ShellAnalysisLimits = {
  /** Longer lines are not parsed at all. */
  maxSourceChars: number;
  /** Parsing of one line and its payloads together is cancelled after this. */
  parseTimeoutMs: number;
  /** No payload (`bash -c '…'`) is parsed after this; what was parsed is still read to its end. */
  analysisTimeoutMs: number;
  /** Syntax nodes per line, all payloads together; more makes the line ask. */
  maxNodes: number;
  /** Simple commands per line; more makes the line ask (all of them are still checked for deny). */
  maxCommands: number;
  /** Wrappers and payloads inside each other (`sudo bash -c "env sh -c '…'"`). */
  maxNesting: number;
};

/**
 * The bounds that keep one evaluation cheap whatever the model sends. A line over any of them is
 * `ask`; the commands already found are still checked for deny.
 */
export const SHELL_ANALYSIS_LIMITS: Readonly<ShellAnalysisLimits> = {
  maxSourceChars: 128 * 1024,
  parseTimeoutMs: 50,
  analysisTimeoutMs: 100,
  maxNodes: 100_000,
  maxCommands: 256,
  maxNesting: 8,
};

export type AnalysisState = {
  parser: ShellParser;
  context: WordContext;
  limits: ShellAnalysisLimits;
  parseDeadline: number;
  analysisDeadline: number;
  nodes: number;
  analysis: ShellAnalysis;
  view: ReturnType<typeof createBashViewer>;
  /** Loop variables whose values are known: `for f in src/*.ts` gives `"$f"` one of those words. */
  loops: LoopBinding[];
};

type LoopBinding = { source: string; name: string; values: ShellWord[]; start: number; end: number };

function addProblem(state: AnalysisState, problem: string): void {
  if (!state.analysis.problems.includes(problem)) state.analysis.problems.push(problem);
}

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
  const word = (shellWord: ShellWord): ShellWord => ({ ...shellWord, value: restore(shellWord.value) });
  for (const command of state.analysis.commands) {
    // The text is the rendered words, then redirections as written: render the words again.
    const rest = command.text.slice(renderWords(command.words).length);
    command.words = command.words.map(word);
    command.text = `${renderWords(command.words)}${toVisible(restore(rest))}`;
  }
  for (const file of state.analysis.files) {
    file.path = word(file.path);
    file.by = toVisible(restore(file.by));
  }
}

const ANALYSIS_TIMEOUT_PROBLEM = (limits: ShellAnalysisLimits) =>
  `the analysis took longer than ${limits.analysisTimeoutMs} ms`;

export function analyzeSource(state: AnalysisState, options: { source: string; via: string[]; nesting: number }): void {
  const { via, nesting } = options;
  const { limits } = state;
  if (options.source.length > limits.maxSourceChars) {
    addProblem(state, `the command is longer than ${limits.maxSourceChars} characters`);
    return;
  }
  // The line itself is always parsed; its payloads only while there is time.
  if (nesting > 0 && performance.now() > state.analysisDeadline) {
    addProblem(state, ANALYSIS_TIMEOUT_PROBLEM(limits));
    return;
  }
  const viewed = state.view.view(options.source);
  for (const problem of viewed.problems) addProblem(state, problem);
  const remaining = nesting === 0 ? limits.parseTimeoutMs : state.parseDeadline - performance.now();
  const tree = remaining > 0 ? state.parser.parse(viewed.source, { timeoutMs: remaining }) : undefined;
  if (tree === undefined) {
    addProblem(state, `parsing took longer than ${limits.parseTimeoutMs} ms`);
    return;
  }
  try {
    if (tree.rootNode.hasError) {
      addProblem(state, 'the shell parser could not fully understand the command');
    } else {
      const problem = findStructureProblem(tree, viewed.source);
      if (problem !== undefined) addProblem(state, problem);
    }
    walk(state, tree.rootNode, { source: viewed.source, via, nesting });
  } finally {
    tree.delete();
  }
}

function walk(state: AnalysisState, root: Node, options: { source: string; via: string[]; nesting: number }): void {
  const { source, via, nesting } = options;
  state.nodes += root.descendantCount;
  if (state.nodes > state.limits.maxNodes) {
    addProblem(state, `the command has more than ${state.limits.maxNodes} syntax nodes`);
  }
  // A native query finds the nodes; walking the tree from JavaScript costs more than the parse.
  const captures = state.parser.statements.captures(root);
  const redirectsOf = new Map<number, string>();
  // Arithmetic nodes already walked (a `$(( ))` inside another is walked once).
  const walked = new Set<number>();
  for (const { name, node } of captures) {
    if (name === 'redirected') visitRedirectedStatement(node, redirectsOf);
  }
  for (const { name, node } of captures) {
    switch (name) {
      case 'redirect':
        visitFileRedirect(state, node, via);
        break;
      case 'command': {
        const cursor = node.walk();
        try {
          collectCommand(state, cursor, { source, redirects: redirectsOf.get(node.id) ?? '', via, nesting });
        } finally {
          cursor.delete();
        }
        break;
      }
      case 'declaration':
        visitDeclaration(state, node, via);
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

function judge(state: AnalysisState, assignment: Assignment): void {
  const problem = judgeAssignment(assignment);
  if (problem !== undefined) addProblem(state, problem);
  // A variable assigned again no longer holds only its loop's words (the loop's own binding is added after).
  state.loops = state.loops.filter((loop) => loop.name !== assignment.name);
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

/** The words a file argument stands for: itself, or the values of the loop variable it expands. */
function possibleValues(state: AnalysisState, word: ShellWord, where: { source: string; at: number }): ShellWord[] {
  if (word.isStatic) return [word];
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

/** Output operators that write to a file (`>&` only when its target is not a descriptor). */
const OUTPUT_OPERATORS = new Set(['>', '>>', '&>', '&>>', '>|', '<>', '>&']);
const INPUT_OPERATORS = new Set(['<', '<>', '<&']);
const NETWORK_TARGET = /^\/dev\/(tcp|udp)\//;

function isDeviceTarget(path: string): boolean {
  return DEVICE_TARGETS.has(path) || /^\/dev\/fd\/\d+$/.test(path);
}

function recordFile(state: AnalysisState, access: FileAccess): void {
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
  if (isDeviceTarget(path.value)) return;
  if (NETWORK_TARGET.test(path.value)) {
    addProblem(state, `it opens a network connection through ${path.value}`);
    return;
  }
  state.analysis.files.push(access);
}

/** `echo x >> ~/.bashrc` writes a file and `cat < .env` reads one: both are subjects of their own. */
function visitFileRedirect(state: AnalysisState, node: Node, via: string[]): void {
  const operator = node.children.find(
    (child) => child !== null && (OUTPUT_OPERATORS.has(child.type) || INPUT_OPERATORS.has(child.type)),
  );
  const destination = node.childForFieldName('destination');
  if (operator === undefined || operator === null || destination === null) return;
  const target = toShellWord(destination, state.context);
  // `>&2`, `<&0`, `>&-`: descriptors, no files.
  if ((operator.type === '>&' || operator.type === '<&') && target.isStatic && /^(\d+|-)$/.test(target.value)) return;
  const by = `${operator.type} ${renderWords([target])}`;
  if (INPUT_OPERATORS.has(operator.type)) recordFile(state, { access: 'read', path: target, via, by });
  if (!OUTPUT_OPERATORS.has(operator.type)) return;
  if (target.isStatic && (isDeviceTarget(target.value) || NETWORK_TARGET.test(target.value))) {
    recordFile(state, { access: 'write', path: target, via, by });
    return;
  }
  recordFile(state, { access: 'write', path: target, via, by });
  const command = pushCommand(state, { words: [staticWord(operator.type), target], redirects: '', via });
  command.redirect = true;
  command.text = by;
  delete command.opaque;
}

function visitRedirectedStatement(node: Node, redirectsOf: Map<number, string>): void {
  const body = node.childForFieldName('body');
  if (body?.type === 'command') {
    const redirects = node.children
      .filter((child): child is Node => child !== null && child.id !== body.id)
      .map((child) => (child.type === 'heredoc_redirect' ? heredocLabel(child) : child.text));
    redirectsOf.set(body.id, redirects.join(' '));
  }
}

/**
 * `<<'EOF'` for a heredoc: its body is the command's input (analyzed for substitutions on its own),
 * not part of the command a rule like `cat *` describes.
 */
function heredocLabel(redirect: Node): string {
  let label = '';
  for (const child of redirect.children) {
    if (child === null) continue;
    label += child.text;
    if (child.type === 'heredoc_start') break;
  }
  return label;
}

/** `export A=1 B`, `declare -x C=2`, `local d`, `readonly E=1`: the command, and what it assigns. */
function visitDeclaration(state: AnalysisState, node: Node, via: string[]): void {
  const children = node.children.filter((child): child is Node => child !== null && child.type !== 'comment');
  const keyword = children[0]?.text ?? '';
  const words = children.map((child, index) =>
    index === 0 ? staticWord(child.text) : toShellWord(child, state.context),
  );
  pushCommand(state, { words, redirects: '', via });
  const exported =
    keyword === 'export' ||
    children.some((child) => child.type === 'word' && /^-[A-Za-z]*x/.test(child.text) && !child.text.startsWith('--'));
  const reach = exported ? 'environment' : 'shell';
  for (const child of children.slice(1)) {
    if (child.type === 'variable_name') {
      judge(state, { name: child.text, value: undefined, hasValue: false, reach });
    } else if (child.type === 'variable_assignment') {
      judge(state, { ...assignmentOf(state, child), reach });
    }
  }
}

/** The name and static value of a `variable_assignment` node. */
function assignmentOf(state: AnalysisState, node: Node): Omit<Assignment, 'reach'> {
  const name = node.childForFieldName('name')?.text ?? '';
  const valueNode = node.childForFieldName('value');
  if (SUBSCRIPT_WITH_CODE.test(valueNode?.text ?? '')) addProblem(state, NAME_PROBLEM);
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

/**
 * Backticks in an unquoted heredoc body run when the line runs, but the parser leaves them as
 * text (it parses only `$(…)` and `${…}` there): analyze each one as a line of its own.
 */
function visitHeredocBody(state: AnalysisState, body: Node, options: { via: string[]; nesting: number }): void {
  const start = body.parent?.children.find((child) => child?.type === 'heredoc_start');
  if (start === undefined || start === null || /['"\\]/.test(start.text)) return;
  const bodyText = body.text;
  if (!bodyText.includes('`')) return;
  // Blank the substitutions the parser did read: they are analyzed already.
  let text = '';
  let copied = 0;
  for (const child of body.namedChildren) {
    if (child === null || child.type === 'heredoc_content') continue;
    const from = child.startIndex - body.startIndex;
    const to = child.endIndex - body.startIndex;
    text += `${bodyText.slice(copied, from)}${' '.repeat(to - from)}`;
    copied = to;
  }
  text += bodyText.slice(copied);
  let open = -1;
  for (let index = 0; index < text.length; index += 1) {
    const char = text[index];
    if (char === '\\') {
      index += 1;
    } else if (char === '`' && open === -1) {
      open = index + 1;
    } else if (char === '`') {
      if (options.nesting + 1 > state.limits.maxNesting) {
        addProblem(state, `commands are wrapped more than ${state.limits.maxNesting} levels deep`);
        return;
      }
      const source = text.slice(open, index).replace(/\\([\\`$])/g, '$1');
      analyzeSource(state, { source, via: options.via, nesting: options.nesting + 1 });
      open = -1;
    }
  }
  if (open !== -1) addProblem(state, 'a heredoc has a backtick without its closing one');
}

const NAME_PROBLEM = 'bash may read a word as a variable name, and a subscript in a name can run commands';

/** `'a[$(rm x)]'`: once bash reads it as a variable name (`printf -v`, `read`, `[ -v ]`…), it runs. */
const SUBSCRIPT_WITH_CODE = /\[[^\]]*(\$\(|`)/;

/** Text the parser left as a word although bash runs it: backticks, `$( )`, `<( )`. */
const CODE_IN_TEXT = /`|\$\(|[<>]\(/;

/**
 * Code the parser reads as plain text: nested backticks (inside backticks, bash turns `\``, `\$`
 * and `\\` into `` ` ``, `$` and `\`, so `` `echo \`rm x\`` `` runs rm), backticks and
 * substitutions in the words and patterns of `${x:-…}`, `${x#…}`, `${x/…/…}`; and `${x@P}`, which
 * expands a run-time value as a prompt (with its substitutions).
 */
function visitUnparsedCode(state: AnalysisState, node: Node, options: { via: string[]; nesting: number }): void {
  const sources: string[] = [];
  if (node.type === 'command_substitution') {
    if (node.firstChild?.type === '`' && /\\[`$]/.test(node.text)) {
      sources.push(node.text.slice(1, -1).replace(/\\([\\`$])/g, '$1'));
    }
  } else {
    const children = node.children;
    for (let index = 0; index < children.length; index += 1) {
      const child = children[index];
      if (child?.type === '@' && children[index + 1]?.text === 'P') {
        addProblem(state, 'it expands a value only known when the line runs as a prompt, which can run commands');
      }
      // `${!x}` reads the variable x names, and a subscript in that name runs commands (`${!x*}` and
      // `${!a[@]}` only list names and keys).
      if (index === 1 && child?.type === '!' && !/^\$\{!\w+(\*|@|\[[*@]\])\}$/.test(node.text)) {
        addProblem(state, NAME_PROBLEM);
      }
      if ((child?.type === 'word' || child?.type === 'regex') && CODE_IN_TEXT.test(child.text)) {
        sources.push(child.text);
      }
    }
  }
  for (const source of sources) {
    if (options.nesting + 1 > state.limits.maxNesting) {
      addProblem(state, `commands are wrapped more than ${state.limits.maxNesting} levels deep`);
      return;
    }
    analyzeSource(state, { source, via: options.via, nesting: options.nesting + 1 });
  }
}

const ARITHMETIC_PROBLEM = 'bash evaluates a value only known when the line runs as arithmetic, which can run commands';

const ARITHMETIC_TESTS = new Set(['-eq', '-ne', '-lt', '-le', '-gt', '-ge']);

/** `[ -v a[i] ]`, `[[ -R $x ]]`: a test of a variable name that is a subscript or a run-time value. */
function testsVariableName(node: Node): boolean {
  if (node.type !== 'unary_expression') return false;
  const [operator, operand] = node.namedChildren;
  return (operator?.text === '-v' || operator?.text === '-R') && /[[$`]/.test(operand?.text ?? '');
}

/** The nodes bash evaluates as arithmetic in a capture: `$(( ))`, `(( ))`, `[[ a -eq b ]]`, `${x:offset}`… */
function arithmeticOperands(capture: string, node: Node): Node[] {
  if (capture === 'arithmetic') return [node];
  if (capture === 'compound') return node.firstChild?.type === '((' ? [node] : [];
  if (capture === 'comparison') {
    // Only `[[ ]]` evaluates its operands; `[ ]` and `test` want plain integers. A few steps up
    // find the test (an operand nested deeper counts as `[[`: the walk must stay cheap).
    let test = node.parent;
    for (let step = 0; step < 8 && test !== null && test.type !== 'test_command'; step += 1) test = test.parent;
    if (test?.type === 'test_command' && test.firstChild?.type !== '[[') return [];
    if (node.type !== 'binary_expression') return [];
    const operator = node.childForFieldName('operator')?.text ?? '';
    if (!ARITHMETIC_TESTS.has(operator)) return [];
    return [node.childForFieldName('left'), node.childForFieldName('right')].filter((side) => side !== null);
  }
  if (capture === 'expansion') {
    const children = node.children;
    const colon = children.findIndex((child) => child?.type === ':');
    if (colon === -1) return [];
    return children.slice(colon + 1).filter((child): child is Node => child?.isNamed === true);
  }
  return [];
}

/** Numeric special parameters: `$#`, `$?`, `$$`, `$!`. */
const NUMERIC_SPECIALS = new Set(['#', '?', '$', '!']);

/**
 * Whether arithmetic over `node` reads a value Molf cannot see. Bash evaluates a variable's value
 * as arithmetic in turn, and a subscript in that value runs commands: `X='a[$(rm x)]'; echo $((X))`.
 */
function readsRunTimeValue(node: Node, walked: Set<number>): boolean {
  const stack = [node];
  while (stack.length > 0) {
    const current = stack.pop() as Node;
    if (walked.has(current.id)) continue;
    walked.add(current.id);
    switch (current.type) {
      case 'command_substitution':
      case 'process_substitution':
        return true;
      case 'special_variable_name':
        if (!NUMERIC_SPECIALS.has(current.text)) return true;
        break;
      case 'variable_name': {
        // `${#x}` is a length.
        const owner = current.parent?.type === 'subscript' ? current.parent.parent : current.parent;
        if (owner?.type !== 'expansion' || owner.child(1)?.type !== '#') return true;
        break;
      }
      case 'word':
        if (/^[A-Za-z_]/.test(current.text)) return true;
        break;
      default:
        break;
    }
    for (const child of current.namedChildren) if (child !== null) stack.push(child);
  }
  return false;
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

/** Reads the command under the cursor (and leaves the cursor where it was). */
function collectCommand(
  state: AnalysisState,
  cursor: TreeCursor,
  options: { source: string; redirects: string; via: string[]; nesting: number },
): void {
  const words: ShellWord[] = [];
  const redirects: string[] = options.redirects === '' ? [] : [options.redirects];
  const commandStart = cursor.startIndex;
  let wordEnd = -1;
  const pushWord = (word: ShellWord) => {
    // The parser reads `cat\<newline>chsegv` as two words; bash drops the line continuation and
    // runs `catchsegv`. Join them so rules see what bash runs.
    const previous = words[words.length - 1];
    if (
      previous !== undefined &&
      wordEnd !== -1 &&
      cursor.startIndex === wordEnd + 2 &&
      options.source.startsWith('\\\n', wordEnd)
    ) {
      words[words.length - 1] = joinWords(previous, word);
    } else {
      words.push(word);
    }
    wordEnd = cursor.endIndex;
  };
  if (cursor.gotoFirstChild()) {
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
        pushWord(wordAt(state, cursor));
      } else {
        redirects.push(cursor.nodeText);
        wordEnd = -1;
      }
    } while (cursor.gotoNextSibling());
    cursor.gotoParent();
  }
  if (words.length === 0) return;
  const command = pushCommand(state, { words, redirects: redirects.join(' '), via: options.via });
  if (command.opaque !== undefined) return;
  judgeNamesAssigned(state, words);
  const files = fileArgumentsOf(words);
  const by = renderWords(words.slice(0, 2));
  const where = { source: options.source, at: commandStart };
  for (const word of files.reads) {
    for (const path of possibleValues(state, word, where))
      recordFile(state, { access: 'read', path, via: options.via, by });
  }
  for (const word of files.writes) {
    for (const path of possibleValues(state, word, where))
      recordFile(state, { access: 'write', path, via: options.via, by });
  }
  for (const problem of files.problems) addProblem(state, problem);
  unwrapCommand(state, { words, via: options.via, nesting: options.nesting });
}

/**
 * Builtins that assign variables by name (`read NAME`, `printf -v NAME`, `mapfile NAME`, `getopts
 * OPTS NAME`, `let NAME=…`), and `set -a`, after which every assignment is exported.
 */
function judgeNamesAssigned(state: AnalysisState, words: readonly ShellWord[]): void {
  const name = basename((words[0] as ShellWord).value);
  const names: ShellWord[] = [];
  switch (name) {
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
      names.push(...read.operands.slice(-1));
      break;
    }
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
      if (setExportsAssignments(words.map((word) => word.value))) {
        addProblem(state, 'set -a (allexport) or -k passes every later assignment to the programs the line runs');
      }
      return;
    default:
      return;
  }
  for (const word of names) {
    if (!word.isStatic) continue;
    judge(state, { name: word.value.replace(/\[.*$/s, ''), value: undefined, hasValue: false, reach: 'shell' });
  }
}

/** Records one command. Past the command limit the line asks, but every command is still kept for deny. */
export function pushCommand(
  state: AnalysisState,
  options: { words: ShellWord[]; redirects: string; via: string[]; derived?: boolean },
): SimpleCommand {
  if (state.analysis.commands.length === state.limits.maxCommands) {
    addProblem(state, `the command has more than ${state.limits.maxCommands} simple commands`);
  }
  const { words, redirects, via } = options;
  const rendered = renderWords(words);
  const command: SimpleCommand = {
    words,
    text: redirects === '' ? rendered : `${rendered} ${toVisible(redirects)}`,
    via,
    ...(options.derived === true ? { derived: true as const } : {}),
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

export { addProblem as addAnalysisProblem };

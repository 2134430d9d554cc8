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
  /**
   * Set for an output redirection to a file (`> out.txt`, `>> ~/.bashrc`): a write the line does,
   * judged like a command whose words are the operator and the target.
   */
  redirect?: true;
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
  /** The whole analysis of one line, parsing included, stops after this. */
  analysisTimeoutMs: 100,
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
  analysisDeadline: number;
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
    analysisDeadline: performance.now() + SHELL_ANALYSIS_LIMITS.analysisTimeoutMs,
    nodes: 0,
    analysis: { commands: [], problems: [] },
  };
  // bash reads a carriage return as part of a word; the parser reads it as a space.
  if (source.includes('\r'))
    addProblem(state, 'the line contains a carriage return, which bash and the parser read differently');
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
  if (performance.now() > state.analysisDeadline) {
    addProblem(state, ANALYSIS_TIMEOUT_PROBLEM);
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
    walk(state, tree.rootNode, { source, via, nesting });
  } finally {
    tree.delete();
  }
}

function walk(state: AnalysisState, root: Node, options: { source: string; via: string[]; nesting: number }): void {
  const { source, via, nesting } = options;
  state.nodes += root.descendantCount;
  if (state.nodes > SHELL_ANALYSIS_LIMITS.maxNodes) {
    addProblem(state, `the command has more than ${SHELL_ANALYSIS_LIMITS.maxNodes} syntax nodes`);
    return;
  }
  // A native query finds the nodes; walking the tree from JavaScript costs more than the parse.
  const captures = state.parser.statements.captures(root);
  const redirectsOf = new Map<number, string>();
  // Arithmetic nodes already walked (a `$(( ))` inside another is walked once).
  const walked = new Set<number>();
  for (const { name, node } of captures) {
    if (name === 'redirected') visit(state, node, { type: 'redirected_statement', redirectsOf, via });
  }
  let visited = 0;
  for (const { name, node } of captures) {
    visited += 1;
    if (visited % 32 === 0 && performance.now() > state.analysisDeadline) {
      addProblem(state, ANALYSIS_TIMEOUT_PROBLEM);
      return;
    }
    if (name === 'redirect') {
      visitFileRedirect(state, node, via);
    } else if (name === 'command') {
      const cursor = node.walk();
      try {
        collectCommand(state, cursor, { source, redirects: redirectsOf.get(node.id) ?? '', via, nesting });
      } finally {
        cursor.delete();
      }
    } else if (name === 'declaration') {
      visit(state, node, { type: 'declaration_command', redirectsOf, via });
    } else if (name === 'assignment') {
      visit(state, node, { type: 'variable_assignment', redirectsOf, via });
    } else if (name === 'heredoc') {
      visitHeredocBody(state, node, { via, nesting });
    } else if (name === 'substitution' || name === 'expansion') {
      visitUnparsedCode(state, node, { via, nesting });
    } else if (name === 'comparison' && testsVariableName(node)) {
      addProblem(state, NAME_PROBLEM);
    }
    if (!state.analysis.problems.includes(ARITHMETIC_PROBLEM) && !walked.has(node.id)) {
      if (arithmeticOperands(name, node).some((operand) => readsRunTimeValue(operand, walked))) {
        addProblem(state, ARITHMETIC_PROBLEM);
      }
    }
  }
}

const ANALYSIS_TIMEOUT_PROBLEM = `the analysis took longer than ${SHELL_ANALYSIS_LIMITS.analysisTimeoutMs} ms`;

/** Output operators that write to a file (`>&` only when its target is not a descriptor). */
const OUTPUT_OPERATORS = new Set(['>', '>>', '&>', '&>>', '>|', '<>', '>&']);
/** Targets whose writes change no file. */
const HARMLESS_TARGETS = new Set(['/dev/null', '/dev/stdout', '/dev/stderr', '/dev/tty', '/dev/fd/1', '/dev/fd/2']);

/** `echo x >> ~/.bashrc` writes a file: the write is a subject of its own (`>> /home/u/.bashrc`). */
function visitFileRedirect(state: AnalysisState, node: Node, via: string[]): void {
  const operator = node.children.find((child) => child !== null && OUTPUT_OPERATORS.has(child.type));
  const destination = node.childForFieldName('destination');
  if (operator === undefined || operator === null || destination === null) return;
  const target = toShellWord(destination, state.context);
  if (
    target.isStatic &&
    (HARMLESS_TARGETS.has(target.value) || (operator.type === '>&' && /^(\d+|-)$/.test(target.value)))
  ) {
    return;
  }
  const command = pushCommand(state, { words: [staticWord(operator.type), target], redirects: '', via });
  if (command !== undefined) {
    command.redirect = true;
    command.text = `${operator.type} ${renderWords([target])}`;
    delete command.opaque;
  }
}

function visit(
  state: AnalysisState,
  node: Node,
  options: { type: string; redirectsOf: Map<number, string>; via: string[] },
): void {
  const { redirectsOf, via } = options;
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
      if (SUBSCRIPT_WITH_CODE.test(node.childForFieldName('value')?.text ?? '')) addProblem(state, NAME_PROBLEM);
      return;
    }
    default:
      return;
  }
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
      if (options.nesting + 1 > SHELL_ANALYSIS_LIMITS.maxNesting) {
        addProblem(state, `commands are wrapped more than ${SHELL_ANALYSIS_LIMITS.maxNesting} levels deep`);
        return;
      }
      if (state.analysis.commands.length >= SHELL_ANALYSIS_LIMITS.maxCommands) return;
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
    if (options.nesting + 1 > SHELL_ANALYSIS_LIMITS.maxNesting) {
      addProblem(state, `commands are wrapped more than ${SHELL_ANALYSIS_LIMITS.maxNesting} levels deep`);
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
      if (type === 'variable_assignment' || type === 'comment') continue;
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

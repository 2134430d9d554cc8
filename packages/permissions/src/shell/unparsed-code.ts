import type { Node } from 'web-tree-sitter';
import { type AnalysisState, addProblem, judge, NAME_PROBLEM, nestingProblem } from './analysis-state.ts';
import type { InnerRun } from './inner-run.ts';

/**
 * Backticks in an unquoted heredoc body run when the line runs, but the parser leaves them as
 * text (it parses only `$(…)` and `${…}` there): each one is a line of its own to analyze. Returns
 * those lines and the problems found, in order.
 */
export function findHeredocCode(state: AnalysisState, body: Node, options: { nesting: number }): InnerRun[] {
  const found: InnerRun[] = [];
  const start = body.parent?.children.find((child) => child?.type === 'heredoc_start');
  if (start === undefined || start === null || /['"\\]/.test(start.text)) return found;
  const bodyText = body.text;
  if (!bodyText.includes('`') && !bodyText.includes('$')) return found;
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
  // The parser reads no substitution at all in a body that starts with blanks and then `$`: what
  // it left as text is scanned for denies, and the line asks.
  if (/(^|[^\\])\$[({]/.test(text)) {
    found.push(
      { type: 'problem', problem: 'a heredoc holds a substitution the parser did not read' },
      { type: 'scan', source: text },
    );
  }
  let open = -1;
  for (let index = 0; index < text.length; index += 1) {
    const char = text[index];
    if (char === '\\') {
      index += 1;
    } else if (char === '`' && open === -1) {
      open = index + 1;
    } else if (char === '`') {
      if (options.nesting + 1 > state.limits.maxNesting) {
        found.push({ type: 'problem', problem: nestingProblem(state.limits) });
        return found;
      }
      const source = text.slice(open, index).replace(/\\([\\`$])/g, '$1');
      found.push({ type: 'line', source });
      open = -1;
    }
  }
  if (open !== -1) found.push({ type: 'problem', problem: 'a heredoc has a backtick without its closing one' });
  return found;
}

/** Text the parser left as a word although bash runs it: backticks, `$( )`, `<( )`. */
const CODE_IN_TEXT = /`|\$\(|[<>]\(/;

/**
 * Code the parser reads as plain text: nested backticks (inside backticks, bash turns `\``, `\$`
 * and `\\` into `` ` ``, `$` and `\`, so `` `echo \`rm x\`` `` runs rm), backticks and
 * substitutions in the words and patterns of `${x:-…}`, `${x#…}`, `${x/…/…}`; and `${x@P}`, which
 * expands a run-time value as a prompt (with its substitutions). Judges the assignments and adds the
 * problems it finds; returns the code, as lines to analyze.
 */
export function visitUnparsedCode(state: AnalysisState, node: Node, options: { nesting: number }): InnerRun[] {
  const sources: string[] = [];
  if (node.type === 'command_substitution') {
    if (node.firstChild?.type === '`' && /\\[`$]/.test(node.text)) {
      sources.push(node.text.slice(1, -1).replace(/\\([\\`$])/g, '$1'));
    }
  } else {
    const children = node.children;
    for (let index = 0; index < children.length; index += 1) {
      const child = children[index];
      // `${NAME:=value}` and `${NAME=value}` assign NAME as `NAME=value;` does.
      if ((child?.type === ':=' || child?.type === '=') && children[index - 1]?.type === 'variable_name') {
        const value = children[index + 1];
        judge(state, {
          name: children[index - 1]?.text ?? '',
          value: value?.type === 'word' ? value.text : undefined,
          hasValue: true,
          reach: 'shell',
        });
      }
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
      // Inside double quotes and heredocs, quotes in `${x:-'…'}` are literal: `"${x:-'$(rm y)'}"`
      // runs rm. The parser still reads a raw string there.
      if (child?.type === 'raw_string' && CODE_IN_TEXT.test(child.text)) sources.push(child.text.slice(1, -1));
    }
  }
  if (sources.length === 0) return [];
  if (options.nesting + 1 > state.limits.maxNesting)
    return [{ type: 'problem', problem: nestingProblem(state.limits) }];
  return sources.map((source) => ({ type: 'line', source }));
}

import type { Node, TreeCursor } from 'web-tree-sitter';
import { type AnalysisState, addProblem, judge, NAME_PROBLEM, SUBSCRIPT_WITH_CODE } from './analysis-state.ts';
import { ARITHMETIC_PROBLEM } from './arithmetic.ts';
import { isDescriptorWord } from './redirections.ts';
import { type ShellWord, toShellWord, toSimpleShellWord } from './shell-words.ts';
import type { Assignment } from './variable-assignments.ts';

/** The name and static value of a `variable_assignment` node. */
export function assignmentOf(state: AnalysisState, node: Node): Omit<Assignment, 'reach'> {
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
export function commandWords(
  state: AnalysisState,
  node: Node,
  source: string,
): { words: ShellWord[]; hereString: boolean } {
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

import type { Node } from 'web-tree-sitter';

export const ARITHMETIC_PROBLEM =
  'bash evaluates a value only known when the line runs as arithmetic, which can run commands';

const ARITHMETIC_TESTS = new Set(['-eq', '-ne', '-lt', '-le', '-gt', '-ge']);

/** `[ -v a[i] ]`, `[[ -R $x ]]`: a test of a variable name that is a subscript or a run-time value. */
export function testsVariableName(node: Node): boolean {
  if (node.type !== 'unary_expression') return false;
  const [operator, operand] = node.namedChildren;
  return (operator?.text === '-v' || operator?.text === '-R') && /[[$`]/.test(operand?.text ?? '');
}

/** The nodes bash evaluates as arithmetic in a capture: `$(( ))`, `(( ))`, `[[ a -eq b ]]`, `${x:offset}`… */
export function arithmeticOperands(capture: string, node: Node): Node[] {
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
export function readsRunTimeValue(node: Node, walked: Set<number>): boolean {
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
      // Quotes don't keep a name from being evaluated: `$(( "x" ))` reads x as `$(( x ))` does.
      case 'string_content':
      case 'raw_string':
        if (/[A-Za-z_]/.test(current.text)) return true;
        break;
      default:
        break;
    }
    for (const child of current.namedChildren) if (child !== null) stack.push(child);
  }
  return false;
}

import { findNodeAtLocation, parseTree } from 'jsonc-parser';
import { textPosition } from './parse-jsonc.ts';

/**
 * Where the value at `path` starts in a JSONC text (line and column from 1), for an error about it
 * that a schema found: with `key`, where its property's name starts instead (a name that is not
 * allowed). A path that leads nowhere (a missing property) gives the nearest object on it; a text
 * that does not parse gives undefined.
 */
export function locateJsoncValue(
  text: string,
  path: ReadonlyArray<string | number>,
  options: { key?: boolean } = {},
): { line: number; column: number } | undefined {
  const tree = parseTree(text, [], { allowTrailingComma: true });
  if (tree === undefined) return undefined;
  for (let length = path.length; length >= 0; length -= 1) {
    const node = findNodeAtLocation(tree, path.slice(0, length) as Array<string | number>);
    if (node === undefined) continue;
    const at = options.key === true && length === path.length && node.parent?.type === 'property' ? node.parent : node;
    return textPosition(text, at.offset);
  }
  return undefined;
}

import type { Tree } from 'web-tree-sitter';

/**
 * Nodes whose text between their children is literal content, not separators: a heredoc body holds
 * text around its substitutions, a string its characters.
 */
const CONTENT_CONTAINERS = new Set(['heredoc_body', 'string', 'translated_string']);
/** Nodes taken whole, never entered: their inside is no shell syntax. */
const OPAQUE_NODES = new Set(['raw_string', 'ansi_c_string', 'comment', 'heredoc_content', 'string_content', 'regex']);
/** What may stand between two tokens: blanks, newlines and line continuations. */
const SEPARATOR = /^(?:[ \t\n]|\\\n)*$/;
/**
 * `python3 - <<EOF`: the parser drops a lone `-` (standard input) before a heredoc; bash passes it
 * as a word, which changes nothing about what runs.
 */
const DASH_BEFORE_HEREDOC = /^[ \t]+-[ \t]*$/;
/** Characters after which `#` starts a comment in bash. */
const COMMENT_MAY_FOLLOW = /[ \t\n;&|()]/;

/** The index just after the newline that ends the line containing `index`. */
function lineEnd(source: string, index: number): number {
  const newline = source.indexOf('\n', index);
  return newline === -1 ? source.length : newline + 1;
}

/**
 * Whether the parsed tree covers the line the way bash reads it: every character belongs to a token
 * except blanks, newlines and line continuations between tokens, and every comment starts where bash
 * would start one. Anything else is text the parser skipped or read as a comment that bash reads as
 * code, so the analysis of the tree cannot be trusted. Returns the problem, or undefined.
 */
export function findStructureProblem(tree: Tree, source: string): string | undefined {
  const cursor = tree.walk();
  try {
    let covered = 0;
    // Per depth: whether the text directly between this node's children is content.
    const contentAt: boolean[] = [false];
    const gapProblem = (from: number, to: number, next?: string): string | undefined => {
      if (to <= from) return undefined;
      const gap = source.slice(from, to);
      if (next === 'heredoc_redirect' && DASH_BEFORE_HEREDOC.test(gap)) return undefined;
      return SEPARATOR.test(gap)
        ? undefined
        : `the parser skipped ${JSON.stringify(gap.slice(0, 20))}, which bash reads`;
    };
    if (!cursor.gotoFirstChild()) return gapProblem(0, source.length);
    let depth = 1;
    for (;;) {
      const start = cursor.startIndex;
      if (contentAt[depth - 1] !== true) {
        // A heredoc body's text before its first substitution lies outside every node; only the
        // rest of the line that started the heredoc is shell syntax.
        const end = cursor.nodeType === 'heredoc_body' ? Math.min(start, lineEnd(source, covered)) : start;
        const problem = gapProblem(covered, end, cursor.nodeType);
        if (problem !== undefined) return problem;
      }
      covered = Math.max(covered, start);
      if (cursor.nodeType === 'comment' && start > 0 && !COMMENT_MAY_FOLLOW.test(source[start - 1] as string)) {
        return 'the parser reads a comment where bash reads a word';
      }
      const type = cursor.nodeType;
      if (!OPAQUE_NODES.has(type) && cursor.gotoFirstChild()) {
        contentAt[depth] = CONTENT_CONTAINERS.has(type);
        depth += 1;
        continue;
      }
      covered = Math.max(covered, cursor.endIndex);
      // Next sibling, or up until there is one; the text after a node's last child is checked too.
      while (!cursor.gotoNextSibling()) {
        if (depth === 1 || !cursor.gotoParent()) return gapProblem(covered, source.length);
        depth -= 1;
        const end = cursor.endIndex;
        if (contentAt[depth] !== true) {
          const problem = gapProblem(covered, end);
          if (problem !== undefined) return problem;
        }
        covered = Math.max(covered, end);
      }
    }
  } finally {
    cursor.delete();
  }
}

/** One line of a unified diff as the page draws it. */
export type UnifiedDiffLine = { type: 'add' | 'remove' | 'same' | 'hunk' | 'meta'; text: string };

/**
 * The lines of a unified diff (as the worker computes it) to draw: `@@` hunk headers, added,
 * removed and context lines without their mark, and `\ No newline at end of file` as a meta line.
 * The `---`/`+++` file headers are left out: the view names the file once above.
 */
export function unifiedDiffLines(diff: string): UnifiedDiffLine[] {
  const text = diff.endsWith('\n') ? diff.slice(0, -1) : diff;
  if (text === '') return [];
  const lines: UnifiedDiffLine[] = [];
  let inHunk = false;
  for (const line of text.split('\n')) {
    if (line.startsWith('@@')) {
      inHunk = true;
      lines.push({ type: 'hunk', text: line });
    } else if (!inHunk) {
    } else if (line.startsWith('+')) lines.push({ type: 'add', text: line.slice(1) });
    else if (line.startsWith('-')) lines.push({ type: 'remove', text: line.slice(1) });
    else if (line.startsWith('\\')) lines.push({ type: 'meta', text: line.slice(1).trim() });
    else lines.push({ type: 'same', text: line.startsWith(' ') ? line.slice(1) : line });
  }
  return lines;
}

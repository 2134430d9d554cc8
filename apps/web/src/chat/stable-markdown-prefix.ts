/**
 * Where a streaming Markdown text splits into blocks that are complete (they cannot change as more
 * text arrives) and the block still growing: after the last blank line outside a code fence. The
 * page renders the complete part once and only the growing block on each update, so the cost of
 * an update does not grow with the answer. Text only grows while it streams, so the scan goes on
 * from where it stopped; other text starts it again.
 */
export type PrefixScanner = (text: string) => number;

const FENCE = /^ {0,3}(```|~~~)/;

export function createPrefixScanner(): PrefixScanner {
  let scanned = '';
  /** Where the next line starts, in `scanned`. */
  let lineStart = 0;
  let inFence = false;
  let cut = 0;
  return (text) => {
    if (!text.startsWith(scanned.slice(0, lineStart))) {
      lineStart = 0;
      inFence = false;
      cut = 0;
    }
    scanned = text;
    // Only whole lines are judged: the last one may still grow.
    for (let end = text.indexOf('\n', lineStart); end !== -1; end = text.indexOf('\n', lineStart)) {
      const line = text.slice(lineStart, end);
      if (FENCE.test(line)) inFence = !inFence;
      else if (!inFence && line.trim() === '' && lineStart > 0) cut = end + 1;
      lineStart = end + 1;
    }
    return cut;
  };
}

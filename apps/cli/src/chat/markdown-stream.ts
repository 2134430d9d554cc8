/**
 * Cuts streamed markdown into blocks that are complete, so each can be rendered once and printed
 * for good while the rest still streams. A block is complete when a blank line outside a code fence
 * is followed by a line that starts at the margin (an indented one may still belong to a list item
 * above), or when its code fence closes.
 */
export type MarkdownStream = {
  /** Adds streamed text; returns the blocks it completed, in order. */
  push(text: string): string[];
  /** The text of the block still being written. */
  pending(): string;
  /** Ends the stream: returns what was left (empty if nothing). */
  finish(): string;
};

const FENCE = /^ {0,3}(`{3,}|~{3,})/;

export function createMarkdownStream(): MarkdownStream {
  let text = '';
  /** Where the complete lines of `text` were scanned up to. */
  let scanned = 0;
  let fence: string | undefined;
  let sawBlank = false;

  return {
    push(piece) {
      text += piece;
      const blocks: string[] = [];
      let lineStart = scanned;
      for (let end = text.indexOf('\n', lineStart); end !== -1; end = text.indexOf('\n', lineStart)) {
        const line = text.slice(lineStart, end);
        const next = end + 1;
        if (fence !== undefined) {
          const close = FENCE.exec(line);
          if (
            close?.[1] !== undefined &&
            close[1][0] === fence[0] &&
            close[1].length >= fence.length &&
            line.trim() === close[1]
          ) {
            fence = undefined;
            // A closed fence ends its block.
            blocks.push(text.slice(0, next));
            text = text.slice(next);
            lineStart = 0;
            sawBlank = false;
            continue;
          }
        } else if (line.trim() === '') {
          sawBlank = lineStart > 0;
        } else {
          if (sawBlank && !/^\s/.test(line)) {
            blocks.push(text.slice(0, lineStart));
            text = text.slice(lineStart);
            lineStart = 0;
            sawBlank = false;
            // The line now starts the text: look at it again as the new block's first line.
            continue;
          }
          sawBlank = false;
          const open = FENCE.exec(line);
          if (open?.[1] !== undefined) fence = open[1];
        }
        lineStart = next;
      }
      scanned = lineStart;
      return blocks.filter((block) => block.trim() !== '');
    },
    pending: () => text,
    finish() {
      const rest = text;
      text = '';
      scanned = 0;
      fence = undefined;
      sawBlank = false;
      return rest.trim() === '' ? '' : rest;
    },
  };
}

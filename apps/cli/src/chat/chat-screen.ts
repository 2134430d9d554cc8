import stringWidth from 'string-width';

/** What the screen writes to: a terminal's stdout, or anything with `write` (a pipe). */
export type ScreenOutput = { write(text: string): unknown; columns?: number };

/** The lines kept at the bottom of a terminal and redrawn in place: the status line and the input. */
export type LiveRegion = {
  lines: readonly string[];
  /** Where the cursor stands: a line of `lines` and a column in cells; none hides the cursor. */
  cursor?: { line: number; column: number };
};

/**
 * The chat's terminal. What is printed scrolls up for good; below it a live region (the answer being
 * written, the status line, the input) is redrawn in place on every change. Not on a terminal, the
 * screen only prints: there is no live region to draw.
 */
export type ChatScreen = {
  readonly interactive: boolean;
  /** Prints text above the live region; a missing final newline is added. */
  print(text: string): void;
  /** Replaces the live region and draws it. */
  setLive(region: LiveRegion): void;
  /** Erases the live region and shows the cursor: what is printed afterwards starts on a fresh line. */
  close(): void;
};

const ERASE_DOWN = '\u001b[J';
const HIDE_CURSOR = '\u001b[?25l';
const SHOW_CURSOR = '\u001b[?25h';

export function createChatScreen(output: ScreenOutput, options: { interactive: boolean }): ChatScreen {
  if (!options.interactive) {
    return {
      interactive: false,
      print: (text) => output.write(text.endsWith('\n') ? text : `${text}\n`),
      setLive: () => {},
      close: () => {},
    };
  }
  let live: LiveRegion = { lines: [] };
  /** The cursor's row, counted from the top of the drawn region. */
  let cursorRow = 0;
  let drawn = false;

  /** Back to the top of the drawn region, and everything from there down erased. */
  const erase = (): string => {
    if (!drawn) return '';
    drawn = false;
    return `${cursorRow > 0 ? `\u001b[${cursorRow}A` : ''}\r${ERASE_DOWN}`;
  };

  const draw = (): string => {
    if (live.lines.length === 0) {
      cursorRow = 0;
      return SHOW_CURSOR;
    }
    const columns = Math.max(10, output.columns ?? 80);
    let text = '';
    let rows = 0;
    let target: { row: number; column: number } | undefined;
    live.lines.forEach((line, index) => {
      if (index > 0) text += '\r\n';
      text += line;
      const width = stringWidth(line);
      const lineRows = Math.max(1, Math.ceil(width / columns));
      const cursor = live.cursor;
      if (cursor?.line === index) {
        // A cursor just past a line that fills its last row exactly stays on that row's last cell.
        const column = Math.min(cursor.column, lineRows * columns - 1);
        target = { row: rows + Math.floor(column / columns), column: column % columns };
      }
      rows += lineRows;
    });
    drawn = true;
    const lastRow = rows - 1;
    if (target === undefined) {
      cursorRow = lastRow;
      return `${HIDE_CURSOR}${text}`;
    }
    const up = lastRow - target.row;
    cursorRow = target.row;
    return `${HIDE_CURSOR}${text}\r${up > 0 ? `\u001b[${up}A` : ''}${target.column > 0 ? `\u001b[${target.column}C` : ''}${SHOW_CURSOR}`;
  };

  return {
    interactive: true,
    print(text) {
      output.write(`${erase()}${text.endsWith('\n') ? text : `${text}\n`}${draw()}`);
    },
    setLive(region) {
      live = region;
      output.write(`${erase()}${draw()}`);
    },
    close() {
      live = { lines: [] };
      output.write(`${erase()}${SHOW_CURSOR}`);
    },
  };
}

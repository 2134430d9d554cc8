import stringWidth from 'string-width';
import { expandTabs, toRows } from './terminal-rows.ts';

/** What the screen writes to: a terminal's stdout, or anything with `write` (a pipe). */
export type ScreenOutput = { write(text: string): unknown; columns?: number; rows?: number };

/** The lines kept at the bottom of a terminal and redrawn in place: the status line and the input. */
export type LiveRegion = {
  lines: readonly string[];
  /** Where the cursor stands: a line of `lines` and a column in cells; none hides the cursor. */
  cursor?: { line: number; column: number };
};

/**
 * The chat's terminal. What is printed scrolls up for good; below it a live region (the answer being
 * written, the status line, the input) is redrawn in place on every change. The region is written
 * row by row, cut by cells (tabs expanded), and never taller than the terminal but one row: rows
 * that scrolled off the top could not be erased again. Past that, its last rows show (those up to
 * the cursor, when the cursor is higher). Not on a terminal, the screen only prints: there is no
 * live region to draw.
 */
export type ChatScreen = {
  readonly interactive: boolean;
  /** Prints text above the live region; a missing final newline is added. */
  print(text: string): void;
  /** Replaces the live region and draws it. */
  setLive(region: LiveRegion): void;
  /** Erases the live region and shows the cursor: what is printed afterwards starts on a fresh line. */
  close(): void;
  /**
   * Lends the terminal (an editor runs in it): the live region is erased and nothing is written
   * until `resume`, which prints what was printed meanwhile and draws the region again.
   */
  pause(): void;
  resume(): void;
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
      pause: () => {},
      resume: () => {},
    };
  }
  let live: LiveRegion = { lines: [] };
  /** The cursor's row, counted from the top of the drawn region. */
  let cursorRow = 0;
  let drawn = false;
  /** Text printed while the terminal is lent, to print when it is back; undefined when it is ours. */
  let held: string[] | undefined;

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
    const maxRows = Math.max(1, (output.rows ?? 24) - 1);
    const rows: string[] = [];
    let target: { row: number; column: number } | undefined;
    live.lines.forEach((line, index) => {
      const lineRows = toRows(expandTabs(line), columns);
      const cursor = live.cursor;
      if (cursor?.line === index) {
        let at = 0;
        let column = cursor.column;
        while (at < lineRows.length - 1 && column >= stringWidth(lineRows[at] ?? '')) {
          column -= stringWidth(lineRows[at] ?? '');
          at++;
        }
        // A cursor just past a row that fills the terminal's width stays on that row's last cell.
        target = { row: rows.length + at, column: Math.min(column, columns - 1) };
      }
      rows.push(...lineRows);
    });
    let top = Math.max(0, rows.length - maxRows);
    if (target !== undefined && target.row < top) top = target.row;
    const shown = rows.slice(top, top + maxRows);
    drawn = true;
    const lastRow = shown.length - 1;
    const text = shown.join('\r\n');
    if (target === undefined) {
      cursorRow = lastRow;
      return `${HIDE_CURSOR}${text}`;
    }
    const row = target.row - top;
    const up = lastRow - row;
    cursorRow = row;
    return `${HIDE_CURSOR}${text}\r${up > 0 ? `\u001b[${up}A` : ''}${target.column > 0 ? `\u001b[${target.column}C` : ''}${SHOW_CURSOR}`;
  };

  return {
    interactive: true,
    print(text) {
      const line = text.endsWith('\n') ? text : `${text}\n`;
      if (held !== undefined) held.push(line);
      else output.write(`${erase()}${line}${draw()}`);
    },
    setLive(region) {
      live = region;
      if (held === undefined) output.write(`${erase()}${draw()}`);
    },
    close() {
      live = { lines: [] };
      if (held === undefined) output.write(`${erase()}${SHOW_CURSOR}`);
    },
    pause() {
      if (held !== undefined) return;
      output.write(`${erase()}${SHOW_CURSOR}`);
      held = [];
    },
    resume() {
      if (held === undefined) return;
      const text = held.join('');
      held = undefined;
      output.write(`${text}${draw()}`);
    },
  };
}

import { describe, expect, it } from 'vitest';
import { createChatScreen } from './chat-screen.ts';

function recorder(columns = 20, rows = 24) {
  const writes: string[] = [];
  return { writes, output: { columns, rows, write: (text: string) => writes.push(text) } };
}

describe('the chat screen', () => {
  it('only prints, line by line, when it is not a terminal', () => {
    const { writes, output } = recorder();
    const screen = createChatScreen(output, { interactive: false });
    screen.setLive({ lines: ['status'] });
    screen.print('one');
    screen.print('two\n');
    expect(writes.join('')).toBe('one\ntwo\n');
  });

  it('prints above the live region: erases it, prints, and draws it again below', () => {
    const { writes, output } = recorder();
    const screen = createChatScreen(output, { interactive: true });
    screen.setLive({ lines: ['⠋ working', '> hi'], cursor: { line: 1, column: 4 } });
    writes.length = 0;
    screen.print('answer');
    // The cursor was on the region's second row: up one, erase down, the text, then the region again.
    expect(writes.join('')).toBe(
      '\u001b[1A\r\u001b[J' + 'answer\n' + '\u001b[?25l⠋ working\r\n> hi\r\u001b[4C\u001b[?25h',
    );
  });

  it('counts the rows a long line wraps into, to put the cursor back and to erase them all', () => {
    const { writes, output } = recorder(10);
    const screen = createChatScreen(output, { interactive: true });
    // 25 cells: three rows; the cursor after cell 12 is on the second row, column 2.
    screen.setLive({ lines: [`> ${'x'.repeat(23)}`], cursor: { line: 0, column: 12 } });
    expect(writes.join('')).toContain('\r\u001b[1A\u001b[2C');
    writes.length = 0;
    screen.setLive({ lines: [] });
    expect(writes.join('')).toBe('\u001b[1A\r\u001b[J\u001b[?25h');
  });

  it('measures wide characters by the cells they take', () => {
    const { writes, output } = recorder(10);
    const screen = createChatScreen(output, { interactive: true });
    // Six wide characters take 12 cells: two rows; the cursor at their end is on the second row.
    screen.setLive({ lines: ['日本語日本語'], cursor: { line: 0, column: 12 } });
    writes.length = 0;
    screen.close();
    expect(writes.join('')).toBe('\u001b[1A\r\u001b[J\u001b[?25h');
  });

  it('counts a tab as the cells up to the next tab stop, so that a line of tabs is erased whole', () => {
    const { writes, output } = recorder(20);
    const screen = createChatScreen(output, { interactive: true });
    // Three tabs reach cell 24: the line takes two rows of 20 cells, though it has five characters.
    screen.setLive({ lines: ['a\tb\tc\td'] });
    expect(writes.join('')).toContain('a       b       c   \r\n    d');
    writes.length = 0;
    screen.close();
    expect(writes.join('')).toBe('\u001b[1A\r\u001b[J\u001b[?25h');
  });

  it('draws no more rows than the terminal has but one: the last ones, or those up to the cursor', () => {
    const { writes, output } = recorder(20, 5);
    const screen = createChatScreen(output, { interactive: true });
    const lines = Array.from({ length: 10 }, (_, index) => `line ${index}`);
    screen.setLive({ lines, cursor: { line: 9, column: 6 } });
    expect(writes.join('')).toBe('\u001b[?25lline 6\r\nline 7\r\nline 8\r\nline 9\r\u001b[6C\u001b[?25h');
    writes.length = 0;
    screen.setLive({ lines, cursor: { line: 2, column: 0 } });
    // Erased from the cursor's row (the region's last, three rows down from its top), then drawn from line 2.
    expect(writes.join('')).toBe(
      '\u001b[3A\r\u001b[J' + '\u001b[?25lline 2\r\nline 3\r\nline 4\r\nline 5\r\u001b[3A\u001b[?25h',
    );
    writes.length = 0;
    screen.close();
    expect(writes.join('')).toBe('\r\u001b[J\u001b[?25h');
  });

  it('writes nothing while the terminal is lent, then prints what came meanwhile and draws the region again', () => {
    const { writes, output } = recorder();
    const screen = createChatScreen(output, { interactive: true });
    screen.setLive({ lines: ['> hi'], cursor: { line: 0, column: 4 } });
    writes.length = 0;
    screen.pause();
    expect(writes.join('')).toBe('\r\u001b[J\u001b[?25h');
    writes.length = 0;
    screen.print('answer while away');
    screen.setLive({ lines: ['> again'], cursor: { line: 0, column: 7 } });
    expect(writes).toEqual([]);
    screen.resume();
    expect(writes.join('')).toBe('answer while away\n\u001b[?25l> again\r\u001b[7C\u001b[?25h');
  });
});

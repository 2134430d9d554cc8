import { describe, expect, it } from 'vitest';
import { createTerminalStyle, type TerminalStyle } from '../terminal/terminal-style.ts';
import { formatDiff } from './format-diff.ts';

/** A style that names each colour in brackets, so that a test reads what was painted how. */
const tagged: TerminalStyle = {
  ...createTerminalStyle(0),
  bold: (text) => `[bold]${text}`,
  dim: (text) => `[dim]${text}`,
  hunk: (text) => `[hunk]${text}`,
  added: (text) => `[added]${text}`,
  removed: (text) => `[removed]${text}`,
};

const edit =
  '--- a/src/a.ts\n+++ b/src/a.ts\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n\\ No newline at end of file\n';

describe('formatDiff', () => {
  it('paints headers bold, hunk lines, added and removed lines, and the no-newline marker dim', () => {
    expect(formatDiff({ diff: edit, truncated: false }, tagged).split('\n')).toEqual([
      '[bold]--- a/src/a.ts',
      '[bold]+++ b/src/a.ts',
      '[hunk]@@ -1,3 +1,3 @@',
      ' one',
      '[removed]-two',
      '[added]+TWO',
      ' three',
      '[dim]\\ No newline at end of file',
    ]);
  });

  it('shows at most maxLines lines and says how many more there are, then the note', () => {
    const lines = formatDiff(
      { diff: edit, truncated: true, note: 'The diff has 900 lines; the first 400 are shown.' },
      tagged,
      { maxLines: 3 },
    ).split('\n');
    expect(lines).toEqual([
      '[bold]--- a/src/a.ts',
      '[bold]+++ b/src/a.ts',
      '[hunk]@@ -1,3 +1,3 @@',
      '[dim]… 5 more lines',
      '[dim]The diff has 900 lines; the first 400 are shown.',
    ]);
  });

  it('shows only the note when there is no diff, and nothing when there is neither', () => {
    expect(
      formatDiff({ diff: '', truncated: false, note: 'logo.png is a binary file; no diff is shown.' }, tagged),
    ).toBe('[dim]logo.png is a binary file; no diff is shown.');
    expect(formatDiff({ diff: '', truncated: false }, tagged)).toBe('');
  });

  it('never lets a file’s control characters reach the terminal, and drops the CR of CRLF lines', () => {
    const text = formatDiff({ diff: '@@ -1 +1 @@\n-old\r\n+\u001b[2Jnew\u0007\ttab\r\n', truncated: false }, tagged);
    expect(text).toBe('[hunk]@@ -1 +1 @@\n[removed]-old\n[added]+\\x1b[2Jnew\\x07\ttab');
  });

  it('paints with real colours at a colour level and none without', () => {
    const coloured = formatDiff({ diff: edit, truncated: false }, createTerminalStyle(1));
    expect(coloured).toContain('\u001b[32m+TWO\u001b[39m');
    expect(coloured).toContain('\u001b[31m-two\u001b[39m');
    expect(formatDiff({ diff: edit, truncated: false }, createTerminalStyle(0))).toBe(edit.slice(0, -1));
  });
});

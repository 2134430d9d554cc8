import type { FileDiff } from '@molf/protocol';
import type { TerminalStyle } from '../terminal/terminal-style.ts';

/** Lines of a diff shown when the caller does not say. */
export const DEFAULT_DIFF_LINES = 60;

/**
 * Control characters other than a tab, shown as `\xNN`: a file's escape sequence or carriage
 * return must not move the cursor or recolour the terminal of the person reviewing the change.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it escapes
const CONTROL = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f]/g;

function visible(line: string): string {
  // A CRLF file's lines end in \r: drop it rather than show it on every line.
  return line.replace(/\r$/, '').replace(CONTROL, (char) => `\\x${char.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

function paint(line: string, style: TerminalStyle): string {
  if (line.startsWith('--- ') || line.startsWith('+++ ')) return style.bold(line);
  if (line.startsWith('@@')) return style.hunk(line);
  if (line.startsWith('+')) return style.added(line);
  if (line.startsWith('-')) return style.removed(line);
  // `\ No newline at end of file`, and git's `diff --git`/`index` lines.
  if (line.startsWith('\\') || line.startsWith('diff ') || line.startsWith('index ')) return style.dim(line);
  return line;
}

/**
 * A unified diff (an approval's preview, a tool result's diff) coloured for the terminal: file
 * headers bold, `@@` hunk lines, added and removed lines in the style's colours; at most `maxLines`
 * lines (default {@link DEFAULT_DIFF_LINES}) and then "… N more lines"; then the diff's note (why it
 * is cut or missing), dim. Control characters are shown escaped. Empty when there is nothing to show.
 */
export function formatDiff(diff: FileDiff, style: TerminalStyle, options: { maxLines?: number } = {}): string {
  const maxLines = Math.max(1, options.maxLines ?? DEFAULT_DIFF_LINES);
  const text = diff.diff.endsWith('\n') ? diff.diff.slice(0, -1) : diff.diff;
  const lines = text === '' ? [] : text.split('\n');
  const shown = lines.slice(0, maxLines).map((line) => paint(visible(line), style));
  if (lines.length > maxLines) {
    const more = lines.length - maxLines;
    shown.push(style.dim(`… ${more} more line${more === 1 ? '' : 's'}`));
  }
  if (diff.note !== undefined) shown.push(...diff.note.split('\n').map((line) => style.dim(visible(line))));
  else if (diff.truncated) shown.push(style.dim('(the diff was cut)'));
  return shown.join('\n');
}

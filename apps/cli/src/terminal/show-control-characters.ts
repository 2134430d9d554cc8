/**
 * Control characters other than a tab and a newline: C0, DEL and C1 (`\u009b` is a CSI of its own
 * to some terminals).
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it shows
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/**
 * Text from outside the CLI (the model's answer, a tool's output, a file's name, a server's message)
 * made safe to write to a terminal: each control character but a tab and a newline is shown as
 * `\xNN`. Written as it is, an escape sequence in it could move the cursor, clear the screen, set the
 * window title, write the clipboard (OSC 52), make a link whose target is not its text (OSC 8) or
 * hide the rest of a line (SGR 8); a carriage return or a backspace could write over what was shown.
 * A carriage return before a newline or at the end (CRLF text, cut anywhere when streamed) is dropped.
 */
export function showControlCharacters(text: string): string {
  return text
    .replace(/\r+(?=\n|$)/g, '')
    .replace(CONTROL, (char) => `\\x${char.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

/** `value` with {@link showControlCharacters} applied to every string in it (objects and arrays as from JSON). */
export function showControlCharactersIn<T>(value: T): T {
  if (typeof value === 'string') return showControlCharacters(value) as T;
  if (Array.isArray(value)) return value.map((item) => showControlCharactersIn(item)) as T;
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, showControlCharactersIn(item)])) as T;
  }
  return value;
}

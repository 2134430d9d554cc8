/** Control characters, invisible format characters (bidirectional overrides, zero widths), lone surrogates, unassigned code points. */
const UNPRINTABLE = /\p{C}/gu;

/**
 * Text from outside shown as one line of a table or a sentence (a credential's name, a code's): each
 * control or invisible format character, a newline and a tab included, as `\xNN` (`\u{NNNN}` above
 * 0xFF). Beyond what {@link showControlCharacters} keeps out (escape sequences), a newline cannot
 * break a table's row and a right-to-left override cannot make a name read as another.
 */
export function showOnOneLine(text: string): string {
  return text.replace(UNPRINTABLE, (char) => {
    const code = char.codePointAt(0) ?? 0;
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u{${code.toString(16)}}`;
  });
}

/** Longest session title, in characters (code points), the ellipsis of a cut one included. */
export const MAX_TITLE_CHARS = 60;

/** One line: control characters and runs of white space become one space. */
function toOneLine(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is removed
  return text.replace(/[\u0000-\u001f\u007f\s]+/g, ' ').trim();
}

/**
 * `text` cut to at most `MAX_TITLE_CHARS` at the last word boundary that fits, with `…`; a single
 * word longer than that (a URL, a path) is cut inside. Never splits a surrogate pair.
 */
function cutToTitle(text: string): string {
  const chars = Array.from(text);
  if (chars.length <= MAX_TITLE_CHARS) return text;
  const head = chars.slice(0, MAX_TITLE_CHARS - 1).join('');
  const space = head.lastIndexOf(' ');
  // A word boundary in the last third would throw away too much: cut the word instead.
  const cut = space >= MAX_TITLE_CHARS / 3 ? head.slice(0, space) : head;
  return `${cut.replace(/[\s,;:.!?—–-]+$/u, '')}…`;
}

/** A markdown code fence line (```ts, ~~~). */
const FENCE = /^\s*(`{3,}|~{3,})/;

/**
 * A session's title from its first prompt: the first paragraph (lines up to a blank line or a code
 * fence), on one line, cut cleanly to at most 60 characters; a prompt that opens with a code block
 * is named by the words after it. Undefined when it has no words outside code.
 */
export function titleFromPrompt(prompt: string): string | undefined {
  const lines: string[] = [];
  let inCode = false;
  for (const line of prompt.split('\n')) {
    if (FENCE.test(line)) {
      // Words before a code block are the title; a prompt that opens with one has its words after it.
      if (lines.length > 0) break;
      inCode = !inCode;
      continue;
    }
    if (inCode) continue;
    if (line.trim() === '') {
      if (lines.length > 0) break;
      continue;
    }
    lines.push(line);
    if (lines.join(' ').length > MAX_TITLE_CHARS) break;
  }
  const text = toOneLine(lines.join(' '));
  return text === '' ? undefined : cutToTitle(text);
}

/**
 * A title model's answer as a title: its first line, without the quotes, markdown marks, `Title:`
 * label or final period models add; cut like a prompt's. Undefined when nothing is left.
 */
export function titleFromAnswer(answer: string): string | undefined {
  const line = answer
    .split('\n')
    .map((candidate) => candidate.trim())
    .find((candidate) => candidate !== '');
  if (line === undefined) return undefined;
  const marks = (text: string) => text.replace(/^["'`*_“‘]+|["'`*_”’]+$/g, '').trim();
  const unlabelled = marks(line.replace(/^#+\s*/, '')).replace(/^title\s*:[\s*_]*/i, '');
  const text = toOneLine(marks(marks(unlabelled).replace(/\.$/, '')));
  return text === '' ? undefined : cutToTitle(text);
}

import type { Node } from 'web-tree-sitter';

/** One word of a command: its value when it is known before the line runs, else its source text. */
export type ShellWord = {
  value: string;
  /** False when the word depends on run-time values (`$X`, `$(…)`, globs are separate). */
  isStatic: boolean;
  /**
   * An unquoted `*`, `?` or `[` (the shell expands it to file names) or a brace expansion: `{rm,x}`
   * is the two words `rm x`.
   */
  hasGlob: boolean;
  /** Set when the word expands to more words than Molf follows (a huge brace expansion). */
  unbounded?: string;
  /** Set for `<(cmd)` / `>(cmd)`: a pipe to commands analyzed on their own, not a file. */
  processSubstitution?: true;
  /** The words a brace expansion makes (`{.env,notes.txt}`): each is a file of its own. */
  expansions?: string[];
};

export type WordContext = {
  /** Expands `~`, `~/…`, `$HOME` and `${HOME}`; undefined leaves them as run-time values. */
  home: string | undefined;
};

function dynamic(node: Node): ShellWord {
  return { value: node.text, isStatic: false, hasGlob: false };
}

function fromWordText(text: string, context: WordContext): ShellWord {
  let hasGlob = false;
  let value = '';
  for (let index = 0; index < text.length; index += 1) {
    const char = text[index] as string;
    if (char === '\\') {
      const next = text[index + 1];
      index += 1;
      // A backslash-newline is a line continuation: both characters vanish.
      if (next !== undefined && next !== '\n') value += next;
      continue;
    }
    if (char === '*' || char === '?' || char === '[') hasGlob = true;
    value += char;
  }
  if (text.startsWith('~')) {
    const prefix = /^~[^/]*/.exec(value)?.[0] ?? '~';
    if (prefix === '~') {
      if (context.home !== undefined) value = context.home + value.slice(1);
    } else if (prefix === '~+') {
      // The current directory: `~+/x` is `./x`.
      value = `.${value.slice(2)}`;
    } else {
      // `~-` (the previous directory) and `~user` (another home) are only known when the line runs.
      return { value: text, isStatic: false, hasGlob: false };
    }
  }
  return { value, isStatic: true, hasGlob };
}

const DOUBLE_QUOTE_ESCAPES = /\\([\\"$`\n])/g;

function isHomeExpansion(node: Node): boolean {
  if (node.type === 'simple_expansion') return node.namedChildren[0]?.text === 'HOME' && node.namedChildCount === 1;
  // biome-ignore lint/suspicious/noTemplateCurlyInString: the shell's own ${HOME} syntax
  if (node.type === 'expansion') return node.text === '${HOME}';
  return false;
}

function fromDoubleQuoted(node: Node, context: WordContext): ShellWord {
  let value = '';
  for (const child of node.namedChildren) {
    if (child === null) continue;
    if (child.type === 'string_content') {
      value += child.text.replace(DOUBLE_QUOTE_ESCAPES, (_match, escaped: string) => (escaped === '\n' ? '' : escaped));
    } else if (context.home !== undefined && isHomeExpansion(child)) {
      value += context.home;
    } else {
      return dynamic(node);
    }
  }
  return { value, isStatic: true, hasGlob: false };
}

const ANSI_C_ESCAPES: Record<string, string> = {
  n: '\n',
  t: '\t',
  r: '\r',
  a: '\x07',
  b: '\b',
  e: '\x1b',
  E: '\x1b',
  f: '\f',
  v: '\v',
  '\\': '\\',
  "'": "'",
  '"': '"',
  '?': '?',
};

/** `$'…'` strings; an escape we do not decode makes the word dynamic rather than guessed. */
function fromAnsiC(node: Node): ShellWord {
  const body = node.text.slice(2, -1);
  let value = '';
  for (let index = 0; index < body.length; index += 1) {
    const char = body[index] as string;
    if (char !== '\\') {
      value += char;
      continue;
    }
    const next = body[index + 1] ?? '';
    const simple = ANSI_C_ESCAPES[next];
    if (simple !== undefined) {
      value += simple;
      index += 1;
      continue;
    }
    // As bash reads them: `\u` takes at most 4 hex digits, `\U` 8, `\x` 2, octal 3.
    const rest = body.slice(index + 1);
    const hex = /^x([0-9a-fA-F]{1,2})/.exec(rest);
    const octal = /^([0-7]{1,3})/.exec(rest);
    const unicode = /^u([0-9a-fA-F]{1,4})/.exec(rest) ?? /^U([0-9a-fA-F]{1,8})/.exec(rest);
    const control = /^c(.)/s.exec(rest);
    const match = hex ?? octal ?? unicode ?? control;
    if (match === null) return dynamic(node);
    const codePoint =
      match === control
        ? (match[1] as string).toUpperCase().charCodeAt(0) & 0x1f
        : Number.parseInt(match[1] as string, match === octal ? 8 : 16);
    if (codePoint > 0x10ffff) return dynamic(node);
    // A NUL ends the word: bash passes what comes before it (`$'rm\0junk'` runs rm).
    if (codePoint === 0) break;
    value += String.fromCodePoint(codePoint);
    index += match[0].length;
  }
  return { value, isStatic: true, hasGlob: false };
}

/** A `word`, `number` or `raw_string` from its type and text alone. */
export function toSimpleShellWord(
  type: 'word' | 'number' | 'raw_string',
  text: string,
  context: WordContext,
): ShellWord {
  if (type === 'word') return fromWordText(text, context);
  if (type === 'raw_string') return { value: text.slice(1, -1), isStatic: true, hasGlob: false };
  return { value: text, isStatic: true, hasGlob: false };
}

/** `{a,b}` or `{a..b}` outside quotes (not `${x}`, not `\\{a,b}`). */
const BRACE_EXPANSION = /(^|[^\\$])\{[^{}]*(,|\.\.)[^{}]*\}/;

const OPEN = '\u{E000}';
const CLOSE = '\u{E001}';
const COMMA = '\u{E002}';

function markBraces(text: string): string {
  return text.replaceAll('{', OPEN).replaceAll('}', CLOSE).replaceAll(',', COMMA);
}

function unmark(text: string): string {
  return text.replaceAll(OPEN, '{').replaceAll(CLOSE, '}').replaceAll(COMMA, ',');
}

/** At most this many words from one brace expansion; beyond, the rest stays unexpanded text. */
const MAX_BRACE_WORDS = 256;

/**
 * Bash's comma brace expansion over marked text, outermost group first as bash does:
 * `a{b,c}d` → `abd acd`, `{a,{b,c}}` → `a b c`. At most MAX_BRACE_WORDS words.
 */
function expandBraces(marked: string): string[] {
  for (let open = marked.indexOf(OPEN); open !== -1; open = marked.indexOf(OPEN, open + 1)) {
    let depth = 0;
    let close = -1;
    const commas: number[] = [];
    for (let index = open; index < marked.length; index += 1) {
      const char = marked[index];
      if (char === OPEN) depth += 1;
      else if (char === CLOSE) {
        depth -= 1;
        if (depth === 0) {
          close = index;
          break;
        }
      } else if (char === COMMA && depth === 1) commas.push(index);
    }
    if (close === -1) break;
    if (commas.length === 0) continue;
    const prefix = marked.slice(0, open);
    const suffix = marked.slice(close + 1);
    const bounds = [open, ...commas, close];
    const words: string[] = [];
    for (let part = 0; part + 1 < bounds.length; part += 1) {
      const alternative = marked.slice((bounds[part] as number) + 1, bounds[part + 1]);
      for (const word of expandBraces(`${prefix}${alternative}${suffix}`)) {
        words.push(word);
        if (words.length >= MAX_BRACE_WORDS) return words;
      }
    }
    return words;
  }
  return [unmark(marked)];
}

/** The value of a word-like syntax node, as far as it is known before the line runs. */
export function toShellWord(node: Node, context: WordContext): ShellWord {
  switch (node.type) {
    case 'word':
      return fromWordText(node.text, context);
    case 'number':
      return { value: node.text, isStatic: true, hasGlob: false };
    case 'raw_string':
      return { value: node.text.slice(1, -1), isStatic: true, hasGlob: false };
    case 'string':
      return fromDoubleQuoted(node, context);
    case 'translated_string': {
      const inner = node.namedChildren[0];
      return inner === null || inner === undefined ? dynamic(node) : toShellWord(inner, context);
    }
    case 'ansi_c_string':
      return fromAnsiC(node);
    case 'process_substitution':
      return { ...dynamic(node), processSubstitution: true };
    case 'simple_expansion':
    case 'expansion':
      return context.home !== undefined && isHomeExpansion(node)
        ? { value: context.home, isStatic: true, hasGlob: false }
        : dynamic(node);
    case 'concatenation': {
      let value = '';
      let hasGlob = false;
      // The unquoted text, quoted parts blanked: braces only expand outside quotes.
      let unquoted = '';
      // The value with unquoted braces and commas marked, for the expansion below.
      let marked = '';
      for (const child of node.children) {
        if (child === null) continue;
        const part = toShellWord(child, context);
        if (!part.isStatic) return dynamic(node);
        value += part.value;
        hasGlob ||= part.hasGlob;
        unquoted += child.type === 'word' ? child.text : '_';
        marked += child.type === 'word' ? markBraces(part.value) : part.value;
      }
      if (!BRACE_EXPANSION.test(unquoted)) return { value, isStatic: true, hasGlob };
      // `--{force,x}` runs as `--force --x`: rules must see what runs (a deny on `*--force*` must
      // catch it), so the word stands for its expansions, joined by spaces.
      const words = expandBraces(marked);
      return {
        value: words.join(' '),
        isStatic: true,
        hasGlob: true,
        expansions: words,
        ...(words.length >= MAX_BRACE_WORDS
          ? { unbounded: `a brace expansion makes more than ${MAX_BRACE_WORDS} words` }
          : {}),
      };
    }
    default:
      return dynamic(node);
  }
}

/** A static word needs quotes when it has anything but these characters. */
const PLAIN_WORD = /^[A-Za-z0-9_\-+=.,/:@%^]+$/;

/**
 * Control characters and characters people cannot see (no-break spaces, line separators…): shown as
 * escapes, never raw, so a prompt can't be redrawn by the text it shows.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: these are what must never be shown raw
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u00a0\u00ad\u1680\u2000-\u200f\u2028-\u202f\u205f-\u206f\u3000\ufeff]/;
const C_ESCAPES: Record<string, string> = { '\n': '\\n', '\t': '\\t', '\v': '\\v', '\f': '\\f', '\r': '\\r' };

/** `$'…'` quoting, which bash reads back as the same word. */
function ansiQuote(value: string): string {
  let quoted = '';
  for (const char of value) {
    const code = char.codePointAt(0) as number;
    if (char === '\\' || char === "'") quoted += `\\${char}`;
    else if (C_ESCAPES[char] !== undefined) quoted += C_ESCAPES[char];
    else if (code < 0x20 || code === 0x7f) quoted += `\\x${code.toString(16).padStart(2, '0')}`;
    else if (UNPRINTABLE.test(char)) quoted += `\\u${code.toString(16).padStart(4, '0')}`;
    else quoted += char;
  }
  return `$'${quoted}'`;
}

/** Source text as people may see it: unprintable characters as `\xHH` / `\uHHHH` escapes. */
export function toVisible(text: string): string {
  if (!UNPRINTABLE.test(text)) return text;
  let visible = '';
  for (const char of text) {
    const code = char.codePointAt(0) as number;
    if (char === '\n' || char === '\t' || !UNPRINTABLE.test(char)) visible += char;
    else
      visible += code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  }
  return visible;
}

/** Words joined as one unambiguous, printable line: `git commit -m 'fix bug'`. */
export function renderWords(words: readonly ShellWord[]): string {
  return words
    .map((word) => {
      if (UNPRINTABLE.test(word.value)) return ansiQuote(word.value);
      if (!word.isStatic) return word.value;
      if (PLAIN_WORD.test(word.value)) return word.value;
      return `'${word.value.replaceAll("'", "'\\''")}'`;
    })
    .join(' ');
}

export function staticWord(value: string): ShellWord {
  return { value, isStatic: true, hasGlob: false };
}

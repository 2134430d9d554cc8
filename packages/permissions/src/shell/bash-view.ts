/**
 * Characters the bash grammar skips as blanks although bash reads them as part of a word. tree-sitter's
 * `\s` is Unicode White_Space; bash's blanks are only space and tab (and newline between commands).
 * `echo hi\v# ; rm -rf x` is `echo` with a comment to the parser, and runs rm in bash.
 */
const PARSER_ONLY_BLANKS = new Map<string, string>([
  ['\v', 'a vertical tab'],
  ['\f', 'a form feed'],
  ['\r', 'a carriage return'],
  ['\u0085', 'a next-line character (U+0085)'],
  ['\u00a0', 'a no-break space (U+00A0)'],
  ['\u1680', 'an ogham space (U+1680)'],
  ['\u2028', 'a line separator (U+2028)'],
  ['\u2029', 'a paragraph separator (U+2029)'],
  ['\u202f', 'a narrow no-break space (U+202F)'],
  ['\u205f', 'a medium mathematical space (U+205F)'],
  ['\u3000', 'an ideographic space (U+3000)'],
  ['\ufeff', 'a byte-order mark (U+FEFF)'],
]);
for (let code = 0x2000; code <= 0x200a; code += 1) {
  PARSER_ONLY_BLANKS.set(String.fromCharCode(code), `a typographic space (U+${code.toString(16).toUpperCase()})`);
}

/** Placeholders start here: one private-use character per distinct replaced character. */
const PLACEHOLDER_BASE = 0xe100;
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const CONTROL = /[\u0000-\u0008\u000e-\u001f\u007f]/;
/** Lines without any of these need no view of their own. */
const NEEDS_VIEW =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds
  /[\\\u0000-\u0008\u000b-\u001f\u007f\u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]/;
/** Characters after which a new word starts. */
const WORD_START = /[\s;&|()<>`]/;
/** Private-use characters: the placeholders (and shell-words' brace marks) live there. */
const PRIVATE_USE = /[\ue000-\uf8ff]/;

export type BashViewer = {
  /**
   * The line with every character bash and the parser disagree on replaced by a word character, and
   * why the line is not trusted as it is (empty when it needed no change).
   */
  view(line: string): { source: string; problems: string[] };
  /** Puts the replaced characters back into text taken from any viewed line. */
  restore(text: string): string;
  /** Whether any line needed a replacement. */
  changed(): boolean;
};

function describeCharacter(char: string): string {
  const code = char.charCodeAt(0);
  if (code === 0x7f) return 'DEL (U+007F)';
  return `a control character (U+${code.toString(16).toUpperCase().padStart(4, '0')})`;
}

function blankProblem(char: string): string {
  return `the line contains ${PARSER_ONLY_BLANKS.get(char)}, which bash reads as part of a word and the parser as a blank`;
}

/**
 * Views lines as bash tokenizes them, in a form the parser reads the same way: characters that are
 * blanks to the parser but word characters to bash become private-use word characters, and so does
 * a blank escaped by a backslash (`echo \ #; rm x`: bash's word ` #;` begins with it, the parser
 * starts a comment). Any such character makes the line ask: the analysis models bash, it is not bash.
 * One viewer serves a line and its payloads (`bash -c '…'`), so placeholders never collide.
 */
export function createBashViewer(): BashViewer {
  const originals: string[] = [];
  const placeholderOf = new Map<string, string>();
  const placeholder = (char: string) => {
    let replacement = placeholderOf.get(char);
    if (replacement === undefined) {
      replacement = String.fromCharCode(PLACEHOLDER_BASE + originals.length);
      originals.push(char);
      placeholderOf.set(char, replacement);
    }
    return replacement;
  };
  const isPlaceholder = (char: string) => {
    const code = char.charCodeAt(0);
    return code >= PLACEHOLDER_BASE && code < PLACEHOLDER_BASE + originals.length;
  };

  function view(line: string): { source: string; problems: string[] } {
    const problems: string[] = [];
    const note = (problem: string) => {
      if (!problems.includes(problem)) problems.push(problem);
    };
    if ([...line].some((char) => PRIVATE_USE.test(char) && !isPlaceholder(char))) {
      note('the line contains a private-use character, which Molf cannot judge');
    }
    if (!NEEDS_VIEW.test(line)) return { source: line, problems };
    let source = '';
    for (let index = 0; index < line.length; index += 1) {
      const char = line[index] as string;
      if (PARSER_ONLY_BLANKS.has(char)) {
        note(blankProblem(char));
        source += placeholder(char);
      } else if (CONTROL.test(char)) {
        note(`the line contains ${describeCharacter(char)}, which bash and the parser may read differently`);
        source += char;
      } else if (char === '\\' && index + 1 < line.length) {
        const next = line[index + 1] as string;
        index += 1;
        if (next === ' ' || next === '\t') {
          // Inside a word (`My\ Documents`) both read it alike; only a word that starts with it differs.
          if (WORD_START.test(line[index - 2] ?? '\n')) {
            note('a word starts with a blank escaped by a backslash, which bash and the parser read differently');
          }
          source += `\\${placeholder(next)}`;
        } else if (PARSER_ONLY_BLANKS.has(next)) {
          note(blankProblem(next));
          source += `\\${placeholder(next)}`;
        } else if (
          next === '\n' &&
          !WORD_START.test(line[index - 2] ?? '\n') &&
          !WORD_START.test(line[index + 1] ?? '\n')
        ) {
          // `cat < .e\<newline>nv`: bash joins the halves of a word; the parser ends the word there.
          note('a line continuation splits a word, which bash joins and the parser may not');
          source += `\\${next}`;
        } else {
          source += `\\${next}`;
        }
      } else {
        source += char;
      }
    }
    return { source, problems };
  }

  return {
    view,
    restore(text) {
      if (originals.length === 0) return text;
      let restored = '';
      for (const char of text)
        restored += isPlaceholder(char) ? (originals[char.charCodeAt(0) - PLACEHOLDER_BASE] as string) : char;
      return restored;
    },
    changed: () => originals.length > 0,
  };
}

import { stripVTControlCharacters } from 'node:util';
import chalk, { type ChalkInstance } from 'chalk';
import { Marked } from 'marked';
import { markedTerminal } from 'marked-terminal';
import type { TerminalStyle } from '../terminal/terminal-style.ts';

/** Renders one piece of markdown for the terminal (trailing blank lines removed). */
export type MarkdownRenderer = (markdown: string) => string;

/** Code colours by highlight.js token class, painted with our chalk (cli-highlight's own ignores NO_COLOR). */
function codeTheme(paint: ChalkInstance) {
  return {
    keyword: paint.blue,
    built_in: paint.cyan,
    type: paint.cyan,
    literal: paint.blue,
    number: paint.green,
    regexp: paint.red,
    string: paint.green,
    subst: paint.reset,
    symbol: paint.magenta,
    class: paint.cyan,
    function: paint.yellow,
    title: paint.yellow,
    params: paint.reset,
    comment: paint.gray,
    doctag: paint.gray,
    meta: paint.gray,
    section: paint.bold,
    tag: paint.gray,
    name: paint.blue,
    attr: paint.cyan,
    attribute: paint.cyan,
    variable: paint.magenta,
    bullet: paint.reset,
    addition: paint.green,
    deletion: paint.red,
    default: paint.reset,
  };
}

/**
 * Markdown for the terminal with marked-terminal: headings, emphasis, lists, tables, links, and code
 * blocks highlighted by language, wrapped at `width`. Without colour the layout stays and no escape
 * code is written.
 */
export function createMarkdownRenderer(style: TerminalStyle, width: number): MarkdownRenderer {
  const paint = style.chalk;
  // marked-terminal asks the default chalk whether to highlight code at all: it must agree with ours.
  chalk.level = style.level;
  const marked = new Marked(
    markedTerminal(
      {
        code: paint.yellow,
        blockquote: paint.gray.italic,
        html: paint.gray,
        heading: paint.bold.green,
        firstHeading: paint.bold.magenta,
        hr: paint.reset,
        listitem: paint.reset,
        table: paint.reset,
        paragraph: paint.reset,
        strong: paint.bold,
        em: paint.italic,
        codespan: paint.yellow,
        del: paint.dim.strikethrough,
        link: paint.blue,
        href: paint.blue.underline,
        width,
        reflowText: true,
        emoji: false,
        tab: 2,
      },
      { theme: codeTheme(paint) },
    ),
  );
  // marked-terminal prints the text of a tight list item as written (`**bold**` stays): its text
  // renderer ignores the inline tokens marked gives since v13. Render those inline tokens; every
  // other text falls back to marked-terminal's.
  marked.use({
    renderer: {
      text(token) {
        return 'tokens' in token && token.tokens !== undefined ? this.parser.parseInline(token.tokens) : false;
      },
      // A link shows where it goes. marked-terminal makes its text a terminal hyperlink (OSC 8) where the
      // terminal takes them, the target hidden: an answer could show a trusted address that opens another.
      link(token) {
        const text = this.parser.parseInline(token.tokens);
        const target = paint.blue.underline(token.href);
        return stripVTControlCharacters(text) === token.href ? target : `${paint.blue(text)} (${target})`;
      },
    },
  });
  return (markdown) => {
    const rendered = marked.parse(markdown, { async: false });
    return rendered.replace(/\s+$/, '');
  };
}

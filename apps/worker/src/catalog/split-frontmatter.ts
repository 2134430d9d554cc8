/** How a Markdown file of the catalog begins. */
export type SplitFile =
  /** No frontmatter: the whole text is the body. */
  | { type: 'none'; body: string }
  /** A `---` line opens frontmatter that no later `---` line closes. */
  | { type: 'unclosed' }
  /**
   * `yaml` is the frontmatter, preceded by an empty line for the opening `---`, so that the YAML
   * parser's line numbers are the file's.
   */
  | { type: 'found'; yaml: string; body: string };

const OPENING = /^---[ \t]*\r?\n/;
const CLOSING = /^---[ \t]*(?:\r?\n|$)/m;

/** Splits `---`-delimited frontmatter from the Markdown body after it. Pure. */
export function splitFrontmatter(text: string): SplitFile {
  const opening = OPENING.exec(text);
  if (opening === null) return { type: 'none', body: text };
  const rest = text.slice(opening[0].length);
  const closing = CLOSING.exec(rest);
  if (closing === null) return { type: 'unclosed' };
  return {
    type: 'found',
    yaml: `\n${rest.slice(0, closing.index)}`,
    body: rest.slice(closing.index + closing[0].length),
  };
}

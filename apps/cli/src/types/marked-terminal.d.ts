// marked-terminal ships no types, and @types/marked-terminal pins an older marked: the one function we use.
declare module 'marked-terminal' {
  import type { MarkedExtension } from 'marked';

  /** A marked extension whose renderer writes terminal text; option values are chalk styles or settings. */
  export function markedTerminal(
    options?: Record<string, unknown>,
    highlightOptions?: { theme?: Record<string, (text: string) => string> },
  ): MarkedExtension;
}

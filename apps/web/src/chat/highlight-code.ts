/**
 * Syntax highlighting of code blocks, loaded on first use (highlight.js core and common languages
 * are not part of the first page load). Only finished blocks are highlighted: a streaming answer
 * changes too often to be worth it.
 */
type HighlightJs = typeof import('highlight.js/lib/common').default;

let loading: Promise<HighlightJs> | undefined;

function load(): Promise<HighlightJs> {
  loading ??= import('highlight.js/lib/common').then((module) => module.default);
  return loading;
}

/** Highlights the code blocks under `root` that are not yet highlighted. */
export async function highlightCodeBlocks(root: HTMLElement): Promise<void> {
  const blocks = root.querySelectorAll<HTMLElement>('pre code:not(.hljs)');
  if (blocks.length === 0) return;
  const hljs = await load();
  for (const block of blocks) {
    // Very long blocks would stall the page: they stay plain.
    if ((block.textContent?.length ?? 0) > 100_000) continue;
    hljs.highlightElement(block);
  }
}

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

/** Highlighting gives the page back after this long, so that input and frames never wait for it. */
const SLICE_MS = 10;

function nextSlice(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

/**
 * Highlights the code blocks under `root` that are not yet highlighted, in slices of a few
 * milliseconds (a long answer has many blocks).
 */
export async function highlightCodeBlocks(root: HTMLElement): Promise<void> {
  const blocks = root.querySelectorAll<HTMLElement>('pre code:not(.hljs)');
  if (blocks.length === 0) return;
  const hljs = await load();
  let sliceStart = performance.now();
  for (const block of blocks) {
    if (performance.now() - sliceStart > SLICE_MS) {
      await nextSlice();
      sliceStart = performance.now();
    }
    // Gone from the page meanwhile (the row scrolled away), or highlighted by another call.
    if (!block.isConnected || block.classList.contains('hljs')) continue;
    // Very long blocks would stall the page: they stay plain.
    if ((block.textContent?.length ?? 0) > 100_000) continue;
    hljs.highlightElement(block);
  }
}

import { createEffect, on, onCleanup } from 'solid-js';
import { highlightCodeBlocks } from './highlight-code.ts';
import { renderMarkdown } from './render-markdown.ts';
import { createPrefixScanner } from './stable-markdown-prefix.ts';

/** A growing block larger than this is drawn at most every THROTTLE_MS (a long code block streaming). */
const LARGE_TAIL_CHARS = 8_000;
const THROTTLE_MS = 200;

/** Runs `task` when the page is idle (highlighting is not part of a first render). */
function whenIdle(task: () => void): void {
  if (typeof requestIdleCallback === 'function') requestIdleCallback(task, { timeout: 1_000 });
  else setTimeout(task, 50);
}

/**
 * A model's answer: sanitised Markdown. While it streams, each block is drawn once when it is
 * complete and only the growing one again on each update; once complete, the whole answer is drawn once more
 * (a list or a reference that spans blocks comes out right) and its code highlighted when idle.
 */
export function MarkdownView(props: { text: string; streaming: boolean }) {
  let root: HTMLDivElement | undefined;
  let stable: HTMLDivElement | undefined;
  let growing: HTMLDivElement | undefined;
  /** How much of the text the drawn complete blocks cover. */
  let stableCut = 0;
  let lastDrawn = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const scan = createPrefixScanner();
  onCleanup(() => clearTimeout(timer));

  const drawStreaming = (text: string) => {
    if (root === undefined) return;
    const cut = scan(text);
    if (stable === undefined || growing === undefined || stable.parentElement !== root || cut < stableCut) {
      root.replaceChildren();
      stable = document.createElement('div');
      growing = document.createElement('div');
      root.append(stable, growing);
      stableCut = 0;
    }
    // Blocks completed since the last update are drawn once, after the others: the cost of an
    // update is the new blocks and the growing one, however long the answer is.
    if (cut > stableCut) {
      const blocks = document.createElement('div');
      blocks.innerHTML = renderMarkdown(text.slice(stableCut, cut));
      stable.append(...blocks.childNodes);
      stableCut = cut;
    }
    growing.innerHTML = renderMarkdown(text.slice(cut));
    lastDrawn = Date.now();
  };

  createEffect(
    on([() => props.text, () => props.streaming], ([text, streaming]) => {
      if (root === undefined) return;
      clearTimeout(timer);
      timer = undefined;
      if (!streaming) {
        root.innerHTML = renderMarkdown(text);
        stable = undefined;
        growing = undefined;
        const element = root;
        whenIdle(() => void highlightCodeBlocks(element));
        return;
      }
      const tail = text.length - stableCut;
      const wait = tail > LARGE_TAIL_CHARS ? THROTTLE_MS - (Date.now() - lastDrawn) : 0;
      if (wait <= 0) drawStreaming(text);
      else timer = setTimeout(() => drawStreaming(props.text), wait);
    }),
  );
  return <div ref={root} class="markdown" classList={{ streaming: props.streaming }} />;
}

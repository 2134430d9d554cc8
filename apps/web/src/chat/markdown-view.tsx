import { createEffect, on, onCleanup } from 'solid-js';
import { highlightCodeBlocks } from './highlight-code.ts';
import { renderMarkdown } from './render-markdown.ts';
import { createPrefixScanner } from './stable-markdown-prefix.ts';

/** A growing block larger than this is drawn at most every THROTTLE_MS (a long code block streaming). */
const LARGE_TAIL_CHARS = 8_000;
const THROTTLE_MS = 200;

/** `[label]: destination`: a link reference, which links written before it use too. */
const REFERENCE_DEFINITION = /^ {0,3}\[[^\]\n]+\]:/m;

/** Runs `task` when the page is idle (highlighting is not part of a first render). */
function whenIdle(task: () => void): void {
  if (typeof requestIdleCallback === 'function') requestIdleCallback(task, { timeout: 1_000 });
  else setTimeout(task, 50);
}

/**
 * A model's answer: sanitised Markdown. While it streams, each block is drawn once when it is
 * complete and only the growing one again on each update; once complete, only the rest is drawn
 * (the whole answer again when it defines a link reference, which earlier blocks may use), and
 * its code is highlighted when idle. Blocks drawn apart stay apart: a list whose items are
 * separated by blank lines shows as lists that follow each other, numbered on.
 */
export function MarkdownView(props: { text: string; streaming: boolean }) {
  let root: HTMLDivElement | undefined;
  let stable: HTMLDivElement | undefined;
  let growing: HTMLDivElement | undefined;
  /** How much of the text the drawn complete blocks cover. */
  let stableCut = 0;
  /** The text of those blocks. */
  let drawnPrefix = '';
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
      drawnPrefix = '';
    }
    // Blocks completed since the last update are drawn once, after the others: the cost of an
    // update is the new blocks and the growing one, however long the answer is.
    if (cut > stableCut) {
      const blocks = document.createElement('div');
      blocks.innerHTML = renderMarkdown(text.slice(stableCut, cut));
      stable.append(...blocks.childNodes);
      stableCut = cut;
      drawnPrefix = text.slice(0, cut);
    }
    growing.innerHTML = renderMarkdown(text.slice(cut));
    lastDrawn = Date.now();
  };

  /**
   * The answer streamed here is complete: the blocks drawn stay, and only the rest is drawn, so a
   * long answer's end costs no more than an update. Not when a reference definition could change
   * blocks drawn before it, or the text is not the one drawn: then the caller draws it whole.
   */
  const finishStreamed = (text: string): boolean => {
    if (root === undefined || stable === undefined || growing === undefined || stable.parentElement !== root) {
      return false;
    }
    if (!text.startsWith(drawnPrefix) || REFERENCE_DEFINITION.test(text)) return false;
    const rest = document.createElement('div');
    rest.innerHTML = renderMarkdown(text.slice(stableCut));
    growing.replaceWith(...rest.childNodes);
    return true;
  };

  createEffect(
    on([() => props.text, () => props.streaming], ([text, streaming]) => {
      if (root === undefined) return;
      clearTimeout(timer);
      timer = undefined;
      if (!streaming) {
        if (!finishStreamed(text)) root.innerHTML = renderMarkdown(text);
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

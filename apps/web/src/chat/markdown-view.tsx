import { createEffect, on } from 'solid-js';
import { highlightCodeBlocks } from './highlight-code.ts';
import { renderMarkdown } from './render-markdown.ts';

/** A model's answer: sanitised Markdown, its code highlighted once the text is complete. */
export function MarkdownView(props: { text: string; streaming: boolean }) {
  let root: HTMLDivElement | undefined;
  createEffect(
    on([() => props.text, () => props.streaming], ([text, streaming]) => {
      if (root === undefined) return;
      root.innerHTML = renderMarkdown(text);
      if (!streaming) void highlightCodeBlocks(root);
    }),
  );
  return <div ref={root} class="markdown" classList={{ streaming: props.streaming }} />;
}

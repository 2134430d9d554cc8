import DOMPurify from 'dompurify';
import { Marked } from 'marked';

/**
 * Model answers are Markdown written by a model that read untrusted files and web pages: any HTML
 * in them is sanitised (DOMPurify) before it reaches the page, and links open apart, without the
 * page as referrer. The server's Content-Security-Policy forbids inline scripts besides.
 */
const marked = new Marked({ gfm: true, breaks: false, async: false });

DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A') {
    node.setAttribute('target', '_blank');
    node.setAttribute('rel', 'noopener noreferrer nofollow');
  }
});

const SANITIZE = {
  // No forms, frames, styles or embedded documents: an answer is text, code, tables and images.
  FORBID_TAGS: ['style', 'form', 'input', 'button', 'textarea', 'select', 'iframe', 'object', 'embed', 'svg', 'math'],
  FORBID_ATTR: ['style'],
  ALLOW_DATA_ATTR: false,
};

/** Markdown to sanitised HTML. */
export function renderMarkdown(text: string): string {
  const html = marked.parse(text) as string;
  return DOMPurify.sanitize(html, SANITIZE);
}

/**
 * Renders a small answer once while the page is idle, so that the first real answer does not pay for
 * the renderer's first run (marked's and DOMPurify's set-up, the engine compiling their code): that
 * first run was one long task right when the first answer started to stream.
 */
export function warmUpMarkdown(): void {
  const run = () => {
    renderMarkdown(
      '# Title\n\nSome *text* with `code` and a [link](https://example.org).\n\n- one\n- two\n\n```ts\nconst a = 1;\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n',
    );
  };
  if (typeof requestIdleCallback === 'function') requestIdleCallback(run, { timeout: 2_000 });
  else setTimeout(run, 100);
}

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

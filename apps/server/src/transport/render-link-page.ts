/** Headers of every answer of a link: nothing cached, no referrer, nothing loaded, no framing. */
export const LINK_PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'referrer-policy': 'no-referrer',
  'content-security-policy':
    "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'x-robots-tag': 'noindex, nofollow',
} as const;

function escapeHtml(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (character) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[character] ?? character,
  );
}

/**
 * A small self-contained page (no script, no external asset). `form` adds a button that POSTs to
 * the page's own URL: the token is never written into the page.
 */
export function renderLinkPage(page: {
  title: string;
  message: string;
  /** Shown as preformatted text (a shell line, paths). */
  details?: string | undefined;
  form?: { button: string } | undefined;
}): string {
  const details = page.details === undefined ? '' : `<pre>${escapeHtml(page.details)}</pre>`;
  const form =
    page.form === undefined
      ? ''
      : `<form method="post"><button type="submit">${escapeHtml(page.form.button)}</button></form>`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer"><title>${escapeHtml(page.title)} · Molf</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem}pre{white-space:pre-wrap;word-break:break-all;background:#f4f4f4;padding:.75rem}button{font:inherit;padding:.5rem 1.5rem}</style>
</head><body><h1>${escapeHtml(page.title)}</h1><p>${escapeHtml(page.message)}</p>${details}${form}</body></html>
`;
}

import { existsSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import sirv from 'sirv';

/**
 * What a browser may do with the page: scripts and styles from this server only, no frames, no
 * plugins, WebSocket only back to this server. Model answers and tool output are sanitised before
 * they reach the page; this is the second wall, should anything slip through.
 */
export const WEB_CLIENT_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  // Inline style attributes are set from script (virtualised lists); style elements are not used.
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
  "form-action 'self'",
].join('; ');

const SECURITY_HEADERS: Record<string, string> = {
  'Content-Security-Policy': WEB_CLIENT_CSP,
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  'Cross-Origin-Opener-Policy': 'same-origin',
};

/** Built files under `assets/` carry their content's hash in their name: they never change. */
const IMMUTABLE = 'public, max-age=31536000, immutable';
/** Everything else (index.html) is checked again each time, so a new build is seen at once. */
const REVALIDATE = 'no-cache';

export type WebClientHandler = (request: IncomingMessage, response: ServerResponse) => boolean;

/**
 * Serves the built web client from `root`: hashed assets cached for a year, `index.html` (also for
 * the page's own paths such as `/s/<session>`) revalidated, files precompressed at build time
 * served as brotli or gzip when the browser takes them. Returns false for what it does not serve
 * (other methods, files it does not have), so that the caller answers those.
 */
export function createWebClientHandler(root: string): WebClientHandler | undefined {
  if (!existsSync(join(root, 'index.html'))) return undefined;
  const serve = sirv(root, {
    dev: false,
    etag: true,
    gzip: true,
    brotli: true,
    single: true,
    setHeaders(response, pathname) {
      for (const [name, value] of Object.entries(SECURITY_HEADERS)) response.setHeader(name, value);
      response.setHeader('Cache-Control', pathname.startsWith('/assets/') ? IMMUTABLE : REVALIDATE);
    },
  });
  return (request, response) => {
    if (request.method !== 'GET' && request.method !== 'HEAD') return false;
    let served = true;
    serve(request, response, () => {
      served = false;
    });
    return served;
  };
}

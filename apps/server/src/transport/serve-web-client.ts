import { existsSync } from 'node:fs';
import { join } from 'node:path';
import sirv from 'sirv';
import type { HttpRoute } from './handle-http.ts';

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

/**
 * Serves the built web client from `root`: hashed assets cached for a year, `index.html` (also for
 * the page's own paths such as `/s/<session>`) revalidated, files precompressed at build time
 * served as brotli or gzip when the browser takes them. It answers every path, so it goes last
 * among the routes; undefined when `root` holds no built page.
 */
export function createWebClientRoute(root: string): HttpRoute | undefined {
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
  return {
    matches: () => true,
    handle(request, response) {
      if (request.method !== 'GET' && request.method !== 'HEAD') {
        response.writeHead(405, { allow: 'GET, HEAD' }).end();
        return;
      }
      serve(request, response, () => {
        response.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'not_found' }));
      });
    },
  };
}

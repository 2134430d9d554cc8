import type { IncomingMessage } from 'node:http';

/**
 * Reads and drops a request body of at most `maxBytes`; false (and the request destroyed once the
 * caller answered) when it is larger, so that nobody can make the server read an endless body.
 */
export function readBoundedBody(request: IncomingMessage, maxBytes: number): Promise<boolean> {
  const declared = Number(request.headers['content-length'] ?? 0);
  if (Number.isFinite(declared) && declared > maxBytes) return Promise.resolve(false);
  return new Promise((resolvePromise) => {
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        request.off('data', onData);
        request.pause();
        resolvePromise(false);
      }
    };
    request.on('data', onData);
    request.once('end', () => resolvePromise(true));
    request.once('error', () => resolvePromise(false));
  });
}

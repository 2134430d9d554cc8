import type { IncomingMessage } from 'node:http';

/**
 * Reads a request body of at most `maxBytes` as UTF-8; undefined when it is larger (or the
 * request fails), having stopped reading, so nobody can make the server hold an endless body.
 */
export function readBoundedText(request: IncomingMessage, maxBytes: number): Promise<string | undefined> {
  const declared = Number(request.headers['content-length'] ?? 0);
  if (Number.isFinite(declared) && declared > maxBytes) return Promise.resolve(undefined);
  return new Promise((resolvePromise) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        request.off('data', onData);
        request.pause();
        resolvePromise(undefined);
        return;
      }
      chunks.push(chunk);
    };
    request.on('data', onData);
    request.once('end', () => resolvePromise(Buffer.concat(chunks).toString('utf8')));
    request.once('error', () => resolvePromise(undefined));
  });
}

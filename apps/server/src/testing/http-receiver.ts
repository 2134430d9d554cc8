import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A request the receiver got, read whole. */
export type ReceivedRequest = { method: string; path: string; headers: IncomingHttpHeaders; body: string };

/**
 * A real HTTP server on 127.0.0.1 port 0 that records what is POSTed to it, as a webhook endpoint
 * or an ntfy server would. `answer: 'hang'` never answers (a target that is stuck); the requests
 * it holds are cut on dispose.
 */
export async function startHttpReceiver(
  options: { answer?: 'ok' | 'hang' | number } = {},
): Promise<AsyncDisposable & { url: string; requests: ReceivedRequest[] }> {
  const requests: ReceivedRequest[] = [];
  const held: ServerResponse[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      requests.push({
        method: request.method ?? '',
        path: request.url ?? '',
        headers: request.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      const answer = options.answer ?? 'ok';
      if (answer === 'hang') held.push(response);
      else response.writeHead(answer === 'ok' ? 200 : answer, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolvePromise) => server.listen(0, '127.0.0.1', resolvePromise));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    async [Symbol.asyncDispose]() {
      server.closeAllConnections();
      await new Promise<void>((resolvePromise) => server.close(() => resolvePromise()));
    },
  };
}

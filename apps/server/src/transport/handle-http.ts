import type { IncomingMessage, ServerResponse } from 'node:http';
import type { HealthReport } from '../services/health-report.ts';
import type { WebClientHandler } from './serve-web-client.ts';

/** Plain HTTP next to the WebSocket endpoint: `GET /healthz` for probes, and the web client when it is served. */
export function createHttpHandler(options: { health: () => HealthReport; web?: WebClientHandler | undefined }) {
  return (request: IncomingMessage, response: ServerResponse) => {
    const path = new URL(request.url ?? '/', 'http://localhost').pathname;
    if (path === '/healthz') {
      if (request.method !== 'GET' && request.method !== 'HEAD') {
        response.writeHead(405, { allow: 'GET, HEAD' }).end();
        return;
      }
      const body = JSON.stringify(options.health());
      response.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(body);
      return;
    }
    if (options.web?.(request, response) === true) return;
    response.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'not_found' }));
  };
}

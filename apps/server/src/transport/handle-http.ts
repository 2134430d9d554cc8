import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '@molf/logging';
import type { HealthReport } from '../services/health-report.ts';

/** One part of the plain HTTP next to the WebSocket endpoint: the paths it owns and how it answers them. */
export type HttpRoute = {
  /** Whether this route answers `path` (the URL's path name, undecoded). */
  matches(path: string): boolean;
  handle(request: IncomingMessage, response: ServerResponse, path: string): void | Promise<void>;
};

/** `GET /healthz` for probes. */
export function createHealthRoute(health: () => HealthReport): HttpRoute {
  return {
    matches: (path) => path === '/healthz',
    handle(request, response) {
      if (request.method !== 'GET' && request.method !== 'HEAD') {
        response.writeHead(405, { allow: 'GET, HEAD' }).end();
        return;
      }
      const body = JSON.stringify(health());
      response.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(body);
    },
  };
}

/**
 * `GET /readyz` for load balancers: 200 while the instance can take work, 503 while it cannot
 * reach its database (a load balancer then sends new connections to the others).
 */
export function createReadinessRoute(health: () => HealthReport): HttpRoute {
  return {
    matches: (path) => path === '/readyz',
    handle(request, response) {
      if (request.method !== 'GET' && request.method !== 'HEAD') {
        response.writeHead(405, { allow: 'GET, HEAD' }).end();
        return;
      }
      const report = health();
      const ready = report.status === 'ok';
      const body = JSON.stringify({
        ready,
        ...(report.database === undefined ? {} : { database: report.database }),
      });
      response
        .writeHead(ready ? 200 : 503, { 'content-type': 'application/json', 'cache-control': 'no-store' })
        .end(body);
    },
  };
}

/** Plain HTTP next to the WebSocket endpoint: the first route that matches answers, else 404. */
export function createHttpHandler(options: { routes: readonly HttpRoute[]; logger: Logger }) {
  return (request: IncomingMessage, response: ServerResponse) => {
    const path = new URL(request.url ?? '/', 'http://localhost').pathname;
    const route = options.routes.find((candidate) => candidate.matches(path));
    if (route === undefined) {
      response.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'not_found' }));
      return;
    }
    Promise.resolve()
      .then(() => route.handle(request, response, path))
      .catch((error: unknown) => {
        options.logger.error({ err: error, path: path.split('/').slice(0, 2).join('/') }, 'http request failed');
        if (!response.headersSent) response.writeHead(500, { 'content-type': 'text/plain' });
        response.end('internal error');
      });
  };
}

import { createClientRouter } from './client-router.ts';
import type { RouterServices } from './router-services.ts';
import { router } from './trpc.ts';
import { createWorkerRouter } from './worker-router.ts';

export type { RouterServices } from './router-services.ts';

/**
 * Everything the server answers over its one WebSocket endpoint: the client router's procedures at
 * the top level and the worker router's under `worker`. Each procedure still checks the caller's role.
 */
export function createAppRouter(services: RouterServices) {
  const client = createClientRouter(services);
  return router({ ...client._def.record, worker: createWorkerRouter(services) });
}

export type AppRouter = ReturnType<typeof createAppRouter>;

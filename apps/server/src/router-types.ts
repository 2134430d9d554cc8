/**
 * The type-only entry of the server package (`@molf/server/router`): what clients need to call the
 * server with types, and nothing that runs. Clients import it with `import type`; the lint rule in
 * config/eslint.config.js allows them nothing else from the server.
 */

export type { ClientRouter } from './rpc/client-router.ts';
export type { AppRouter } from './rpc/router.ts';
export type { WorkerRouter } from './rpc/worker-router.ts';

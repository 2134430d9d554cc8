import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type MolfServer, type ServerConfig } from '../create-server.ts';

export const TEST_CLIENT_TOKEN = 'molf_c_test-client-token-0123456789';
export const TEST_WORKER_TOKEN = 'molf_w_test-worker-token-0123456789';

/** A temp directory removed on dispose. */
export async function createTempDir(prefix = 'molf-test-'): Promise<AsyncDisposable & { path: string }> {
  const path = await mkdtemp(join(tmpdir(), prefix));
  return { path, [Symbol.asyncDispose]: () => rm(path, { recursive: true, force: true }) };
}

/** A real server on port 0 with known client and worker tokens. */
export async function startTestServer(options: Partial<ServerConfig> & { dataDir: string }): Promise<MolfServer> {
  return createServer({
    port: 0,
    tokens: { client: TEST_CLIENT_TOKEN, worker: TEST_WORKER_TOKEN },
    ...options,
  });
}

/** Resolves once `predicate` holds, polling each event-loop turn; fails after `timeoutMs`. */
export async function waitFor(predicate: () => boolean, options: { timeoutMs?: number; what?: string } = {}) {
  const deadline = Date.now() + (options.timeoutMs ?? 10_000);
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${options.what ?? 'condition'}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ToolResult, WorkerId, WorkerRegistration } from '@molf/protocol';
import { createWorker, type MolfWorker, type WorkerConfig } from '@molf/worker';
import { createServer, type MolfServer, type ServerConfig } from '../create-server.ts';

export const TEST_CLIENT_TOKEN = 'molf_c_test-client-token-0123456789';
export const TEST_WORKER_TOKEN = 'molf_w_test-worker-token-0123456789';

/** A worker's reconnect backoff for tests that restart or drop its server: back within a fraction of a second. */
export const FAST_RECONNECT = { initialMs: 20, maxMs: 200 };

/** A worker registration with a random id, as a raw subscriber would send it. */
export function createTestRegistration(tools: string[] = ['echo']): WorkerRegistration {
  return {
    workerId: randomUUID() as WorkerId,
    instanceId: randomUUID(),
    name: 'raw',
    workdir: '/tmp',
    tools: tools.map((name) => ({ name, description: name, inputSchema: {} })),
    version: '0',
  };
}

/** A temp directory removed on dispose. */
export async function createTempDir(prefix = 'molf-test-'): Promise<AsyncDisposable & { path: string }> {
  const path = await mkdtemp(join(tmpdir(), prefix));
  return { path, [Symbol.asyncDispose]: () => rm(path, { recursive: true, force: true, maxRetries: 3 }) };
}

/** A real server on port 0 with known client and worker tokens. */
export async function startTestServer(options: Partial<ServerConfig> & { dataDir: string }): Promise<MolfServer> {
  return createServer({
    port: 0,
    tokens: { client: TEST_CLIENT_TOKEN, worker: TEST_WORKER_TOKEN },
    ...options,
  });
}

/** How long a test waits for a condition by default: generous, since a loaded machine is slow. */
export const WAIT_DEADLINE_MS = 120_000;

/**
 * Resolves once `predicate` holds, polling every 10 ms; fails after `timeoutMs`
 * (default {@link WAIT_DEADLINE_MS}).
 */
export async function waitFor(
  predicate: () => boolean | Promise<boolean>,
  options: { timeoutMs?: number; what?: string } = {},
) {
  const deadline = Date.now() + (options.timeoutMs ?? WAIT_DEADLINE_MS);
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${options.what ?? 'condition'}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * Approves once, as a person would, the start of the MCP servers a worker asks about (servers
 * new in `.mcp.json` start only when approved); waits until `count` of them have asked.
 */
export async function approveMcpServerStarts(server: MolfServer, workerId: WorkerId, count = 1): Promise<void> {
  const waiting = () => server.gate.pending({ workerId }).filter((approval) => approval.kind === 'mcp_server');
  await waitFor(() => waiting().length >= count, { what: 'the MCP servers to ask for approval' });
  for (const approval of waiting()) {
    await server.gate.approve({
      sessionId: approval.sessionId,
      approvalId: approval.approvalId,
      scope: 'once',
      by: { credentialId: 'test', connectionId: 'test' },
    });
  }
}

/**
 * A real server on port 0 and a registered worker on a temp workdir, all removed on dispose.
 * `worker` options override the defaults (e.g. extra tools, limits).
 */
export async function startTestLink(
  options: { server?: Partial<ServerConfig>; worker?: Partial<WorkerConfig> } = {},
): Promise<AsyncDisposable & { server: MolfServer; worker: MolfWorker; workdir: string }> {
  const data = await createTempDir();
  const workdir = await createTempDir();
  const server = await startTestServer({ dataDir: data.path, ...options.server });
  const worker = await createWorker({
    serverUrl: server.url,
    token: TEST_WORKER_TOKEN,
    workdir: workdir.path,
    ...options.worker,
  });
  await worker.registered;
  return {
    server,
    worker,
    workdir: workdir.path,
    async [Symbol.asyncDispose]() {
      try {
        await worker.close();
        await server.close();
      } finally {
        await workdir[Symbol.asyncDispose]();
        await data[Symbol.asyncDispose]();
      }
    },
  };
}

/** `count` identical calls to the link's worker, all in flight at once. */
export function dispatchMany(
  link: { server: MolfServer; worker: MolfWorker },
  options: { count: number; toolName: string; args: Record<string, unknown>; timeoutMs: number },
): Promise<ToolResult[]> {
  return Promise.all(
    Array.from({ length: options.count }, () =>
      link.server.dispatcher.dispatch({
        workerId: link.worker.workerId,
        toolName: options.toolName,
        args: options.args,
        timeoutMs: options.timeoutMs,
      }),
    ),
  );
}

import { createMolfClient } from '@molf/client';
import { createWorker } from '@molf/worker';
import { describe, expect, it } from 'vitest';
import {
  createTempDir,
  startTestServer,
  TEST_CLIENT_TOKEN,
  TEST_WORKER_TOKEN,
  waitFor,
} from './testing/test-link.ts';

describe('server ↔ worker link', () => {
  it('registers a worker, dispatches a call to it and returns its result', async () => {
    await using data = await createTempDir();
    await using workdir = await createTempDir();
    await using server = await startTestServer({ dataDir: data.path });
    await using worker = await createWorker({ serverUrl: server.url, token: TEST_WORKER_TOKEN, workdir: workdir.path });
    await worker.registered;

    const result = await server.dispatcher.dispatch({
      workerId: worker.workerId,
      toolName: 'echo',
      args: { text: 'hello' },
      timeoutMs: 5_000,
    });
    expect(result).toEqual({ output: 'hello' });

    await using client = createMolfClient({ url: server.url, token: TEST_CLIENT_TOKEN });
    const workers = await client.rpc.workers.list.query();
    expect(workers).toMatchObject([{ workerId: worker.workerId, state: 'online', tools: ['echo'] }]);
  });
});

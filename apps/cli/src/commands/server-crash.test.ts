import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMolfClient } from '@molf/client/node';
import { startFakeLlm } from '@molf/testkit';
import { createWorker } from '@molf/worker';
import { afterEach, describe, expect, it } from 'vitest';
import { spawnListeningServer, stopSpawnedProcesses, waitUntil } from '../testing/cli-test-kit.ts';

const CLIENT_TOKEN = 'molf_c_crash-test-client-token';
const WORKER_TOKEN = 'molf_w_crash-test-worker-token';
const cleanups: Array<() => Promise<unknown>> = [];

afterEach(async () => {
  // The processes first: the cleanups remove directories they use.
  await stopSpawnedProcesses();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function tempDir(): Promise<string> {
  const path = await mkdtemp(join(tmpdir(), 'molf-crash-'));
  cleanups.push(() => rm(path, { recursive: true, force: true }));
  return path;
}

/** `molf server` as a real child process, resolved once it listens. */
function startServer(options: { dataDir: string; config: string; port: number }) {
  return spawnListeningServer(
    ['--port', String(options.port), '--data-dir', options.dataDir, '--config', options.config],
    {
      env: {
        MOLF_CLIENT_TOKEN: CLIENT_TOKEN,
        MOLF_WORKER_TOKEN: WORKER_TOKEN,
        MOLF_LOG_FILE: 'none',
        MOLF_LOG_LEVEL: 'warn',
      },
    },
  );
}

function waitFor(predicate: () => boolean | Promise<boolean>, what: string): Promise<void> {
  return waitUntil(predicate, { what });
}

describe('a server killed mid-turn', () => {
  it('keeps the prompt and the finished tool results after SIGKILL and a restart', async () => {
    await using llm = await startFakeLlm({
      turns: [
        {
          text: 'Checking.',
          toolCalls: [{ id: 'call_1', name: 'shell_exec', arguments: { command: 'echo finished-before-crash' } }],
        },
        { text: ['half of an answer'], stallAfterChunks: 1 },
      ],
    });
    const dataDir = await tempDir();
    const workdir = await tempDir();
    const config = join(dataDir, 'molf.jsonc');
    await writeFile(
      config,
      `{ // test config\n  "model": "fake/m",\n  "providers": { "fake": { "baseURL": "${llm.baseURL}" } }\n}\n`,
    );
    const first = await startServer({ dataDir, config, port: 0 });
    // The restart takes the same port, so that the worker and the client reconnect to it.
    const port = Number(new URL(first.url).port);

    const worker = await createWorker({
      serverUrl: first.url,
      token: WORKER_TOKEN,
      workdir,
      reconnect: { initialMs: 50, maxMs: 200 },
    });
    cleanups.push(() => worker.close());
    await worker.registered;
    const client = createMolfClient({ url: first.url, token: CLIENT_TOKEN, retryDelayMs: () => 100 });
    cleanups.push(() => client.close());
    await client.ready();
    await client.rpc.permissions.write.mutate({
      workerId: worker.workerId,
      text: '{ "*": "ask", "shell_exec": "allow" }',
    });
    const session = await client.rpc.sessions.create.mutate({ workerId: worker.workerId });
    await client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'please survive a crash' });
    await waitFor(async () => llm.requests.length === 2, 'the second model call (after the tool result)');

    first.child.kill('SIGKILL');
    await first.child;
    await startServer({ dataDir, config, port });
    let messages: Awaited<ReturnType<typeof client.rpc.sessions.get.query>>['messages'] = [];
    await waitFor(async () => {
      try {
        messages = (await client.rpc.sessions.get.query({ sessionId: session.sessionId })).messages;
        return true;
      } catch {
        return false;
      }
    }, 'the restarted server to answer');
    expect(messages.slice(0, 3)).toMatchObject([
      { role: 'user', text: 'please survive a crash' },
      { role: 'assistant', text: 'Checking.', toolCalls: [{ toolCallId: 'call_1', toolName: 'shell_exec' }] },
      { role: 'tool', toolCallId: 'call_1', output: expect.stringContaining('finished-before-crash') },
    ]);
    // The answer in flight when the server died is the only thing lost.
    expect(messages).toHaveLength(3);
  });
});

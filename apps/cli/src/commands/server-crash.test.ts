import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createMolfClient } from '@molf/client';
import { startFakeLlm } from '@molf/testkit';
import { createWorker } from '@molf/worker';
import { execaNode, type ResultPromise } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';

const CLI = fileURLToPath(new URL('../../bin/molf.js', import.meta.url));
const CLIENT_TOKEN = 'molf_c_crash-test-client-token';
const WORKER_TOKEN = 'molf_w_crash-test-worker-token';
const cleanups: Array<() => Promise<unknown>> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function tempDir(): Promise<string> {
  const path = await mkdtemp(join(tmpdir(), 'molf-crash-'));
  cleanups.push(() => rm(path, { recursive: true, force: true }));
  return path;
}

/** `molf server` as a real child process, resolved once it listens. */
async function startServer(options: { dataDir: string; config: string; port: number }) {
  const child: ResultPromise = execaNode(
    CLI,
    ['server', '--port', String(options.port), '--data-dir', options.dataDir, '--config', options.config],
    {
      env: {
        MOLF_CLIENT_TOKEN: CLIENT_TOKEN,
        MOLF_WORKER_TOKEN: WORKER_TOKEN,
        MOLF_LOG_FILE: 'none',
        MOLF_LOG_LEVEL: 'warn',
      },
      reject: false,
      stdin: 'ignore',
    },
  );
  cleanups.push(async () => {
    child.kill('SIGKILL');
    await child;
  });
  const url = await new Promise<string>((resolve, reject) => {
    let seen = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
      const match = /listening on (ws:\/\/\S+)/.exec(seen);
      if (match?.[1] !== undefined) resolve(match[1]);
    });
    void child.then((result) => reject(new Error(`server exited: ${result.stderr}`)));
  });
  return { child, url };
}

async function waitFor(predicate: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
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

import { randomUUID } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { createMolfClient } from '@molf/client/node';
import { createLogger } from '@molf/logging';
import { toolDefinitions, type WorkerId } from '@molf/protocol';
import { createWorker, defineToolHandler, echoTool } from '@molf/worker';
import { describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { createServer } from './create-server.ts';
import { startTcpProxy } from './testing/tcp-proxy.ts';
import {
  createTempDir,
  createTestRegistration,
  dispatchMany,
  FAST_RECONNECT,
  startTestLink,
  startTestServer,
  TEST_CLIENT_TOKEN,
  TEST_WORKER_TOKEN,
  waitFor,
} from './testing/test-link.ts';

/** A tool that never looks at its abort signal, like a stuck child process. */
const stuckTool = defineToolHandler({
  definition: { ...toolDefinitions.echo, name: 'stuck' },
  run: () => new Promise(() => {}),
});

function errorCode(error: unknown): string | undefined {
  return (error as { data?: { code?: string } }).data?.code;
}

describe('server ↔ worker link', () => {
  it('registers a worker, dispatches a call to it and returns its result', async () => {
    await using link = await startTestLink();
    const { server, worker } = link;

    const result = await server.dispatcher.dispatch({
      workerId: worker.workerId,
      toolName: 'echo',
      args: { text: 'hello' },
      timeoutMs: 5_000,
    });
    expect(result).toEqual({ output: 'hello', meta: { truncated: false } });

    await using client = createMolfClient({ url: server.url, token: TEST_CLIENT_TOKEN });
    const workers = await client.rpc.workers.list.query();
    expect(workers).toMatchObject([
      {
        workerId: worker.workerId,
        state: 'online',
        tools: ['echo', 'shell_exec', 'read_file', 'write_file', 'edit_file', 'glob', 'grep'],
      },
    ]);

    // The file tools run for real on the worker's workdir.
    const written = await server.dispatcher.dispatch({
      workerId: worker.workerId,
      toolName: 'write_file',
      args: { path: 'notes.txt', content: 'written over the link\n' },
    });
    expect(written.output).toContain('Created notes.txt');
    const read = await server.dispatcher.dispatch({
      workerId: worker.workerId,
      toolName: 'read_file',
      args: { path: 'notes.txt' },
    });
    expect(read.output).toContain('1\twritten over the link');
    const shell = await server.dispatcher.dispatch({
      workerId: worker.workerId,
      toolName: 'shell_exec',
      args: { command: 'wc -l < notes.txt' },
    });
    expect(shell).toMatchObject({ output: '1\n\nexit code: 0', meta: { exitCode: 0 } });
  });

  it('names a worker after its directory with each control character of the name shown as ?', async () => {
    await using parent = await createTempDir();
    // A file name may hold anything but / and NUL: a line break and a terminal's colour code here.
    const workdir = join(parent.path, 'my\nproject\u001b[31m');
    await mkdir(workdir);
    await using link = await startTestLink({ worker: { workdir } });
    await using client = createMolfClient({ url: link.server.url, token: TEST_CLIENT_TOKEN });
    expect(await client.rpc.workers.list.query()).toMatchObject([
      { workerId: link.worker.workerId, name: 'my?project?[31m', state: 'online' },
    ]);
  });

  it('returns invalid-argument failures as results the model can read', async () => {
    await using link = await startTestLink();
    const { server, worker } = link;

    const result = await server.dispatcher.dispatch({
      workerId: worker.workerId,
      toolName: 'echo',
      args: { text: 42 },
      timeoutMs: 5_000,
    });
    expect(result.meta?.errorKind).toBe('invalid_arguments');
    expect(result.error).toContain('text');

    const missing = await server.dispatcher.dispatch({
      workerId: worker.workerId,
      toolName: 'no_such_tool',
      args: {},
      timeoutMs: 5_000,
    });
    expect(missing.meta?.errorKind).toBe('tool_not_found');
  });

  it('delivers a cancel to the running job, which stops', async () => {
    await using link = await startTestLink();
    const { server, worker } = link;

    const controller = new AbortController();
    const pending = server.dispatcher.dispatch({
      workerId: worker.workerId,
      toolName: 'echo',
      args: { text: 'slow', delayMs: 60_000 },
      timeoutMs: 120_000,
      signal: controller.signal,
    });
    await waitFor(() => worker.stats().running === 1, { what: 'the job to start' });
    controller.abort();

    expect((await pending).meta?.errorKind).toBe('cancelled');
    await waitFor(() => worker.stats().running === 0 && worker.stats().undelivered === 0, { what: 'the job to stop' });
    expect(worker.stats().cancelled).toBe(1);
  });

  it('reports calls cut short by a worker shutdown at once, not at their deadline', async () => {
    await using link = await startTestLink();
    const { server, worker } = link;
    const pending = server.dispatcher.dispatch({
      workerId: worker.workerId,
      toolName: 'echo',
      args: { text: 'slow', delayMs: 60_000 },
      timeoutMs: 120_000,
    });
    await waitFor(() => worker.stats().running === 1, { what: 'the job to start' });
    await worker.close();
    expect((await pending).meta?.errorKind).toBe('cancelled');
  });

  it('cancels a call on the worker when it passes its own timeout plus the margin', async () => {
    await using link = await startTestLink({
      server: { dispatchMarginMs: 50 },
      worker: { tools: [echoTool, stuckTool] },
    });
    const { server, worker } = link;

    const result = await server.dispatcher.dispatch({
      workerId: worker.workerId,
      toolName: 'stuck',
      args: { text: 'x' },
      timeoutMs: 150,
    });
    expect(result.meta?.errorKind).toBe('timeout');
    await waitFor(() => worker.stats().cancelled === 1, { what: 'the cancel to reach the worker' });
    expect(server.dispatcher.pendingCount()).toBe(0);
  });

  it('refuses a wrong or missing token and registers nothing', async () => {
    await using data = await createTempDir();
    await using workdir = await createTempDir();
    await using server = await startTestServer({ dataDir: data.path });

    await using worker = await createWorker({
      serverUrl: server.url,
      token: 'molf_w_not-a-token-this-server-knows',
      workdir: workdir.path,
      reconnect: FAST_RECONNECT,
    });
    await expect(worker.registered).rejects.toMatchObject({ code: 'unauthorized', message: /invalid token/ });

    await using anonymous = createMolfClient({ url: server.url, token: ' '.trim() || 'x' });
    await expect(anonymous.ready({ timeoutMs: 5_000 })).rejects.toMatchObject({ code: 'unauthorized' });

    // No connection params at all: refused the same way.
    const raw = new WebSocket(server.url);
    const reply = await new Promise<string>((resolve) => raw.on('message', (message) => resolve(String(message))));
    expect(JSON.parse(reply)).toMatchObject({ id: null, error: { data: { code: 'unauthorized' } } });
    await new Promise((resolve) => raw.on('close', resolve));

    expect(server.registry.list()).toEqual([]);
  });

  it('refuses worker procedures to a client credential and client procedures to a worker credential', async () => {
    await using data = await createTempDir();
    await using server = await startTestServer({ dataDir: data.path });
    await using client = createMolfClient({ url: server.url, token: TEST_CLIENT_TOKEN });
    expect(await client.ready()).toMatchObject({ role: 'admin' });

    const registration = createTestRegistration([]);
    const subscriptionError = await new Promise<unknown>((resolve) => {
      client.rpc.worker.jobs.subscribe({ registration }, { onError: resolve, onData: () => resolve('data') });
    });
    expect(errorCode(subscriptionError)).toBe('forbidden');
    await expect(
      client.rpc.worker.result.mutate({
        workerId: registration.workerId,
        toolCallId: 'abc' as never,
        result: { output: 'spoofed' },
      }),
    ).rejects.toSatisfy((error) => errorCode(error) === 'forbidden');
    expect(server.registry.list()).toEqual([]);

    await using workerClient = createMolfClient({ url: server.url, token: TEST_WORKER_TOKEN });
    await expect(workerClient.rpc.workers.list.query()).rejects.toSatisfy((error) => errorCode(error) === 'forbidden');
  });

  it('rejects malformed payloads naming the failing field and keeps serving', async () => {
    await using data = await createTempDir();
    await using server = await startTestServer({ dataDir: data.path });
    await using workerClient = createMolfClient({ url: server.url, token: TEST_WORKER_TOKEN });

    const error = await workerClient.rpc.worker.result
      .mutate({ workerId: randomUUID(), toolCallId: 'abc', result: { output: 7 } } as never)
      .catch((caught: unknown) => caught);
    expect(error).toMatchObject({ data: { code: 'invalid_input', field: 'result.output' } });

    // Garbage frames on an authenticated socket don't take the server down.
    const raw = new WebSocket(`${server.url}?connectionParams=1`);
    await new Promise((resolve) => raw.on('open', resolve));
    raw.send(JSON.stringify({ method: 'connectionParams', data: { token: TEST_WORKER_TOKEN } }));
    raw.send('{not json');
    raw.send(JSON.stringify({ id: 1, method: 'mutation', params: { path: 'worker.result', input: null } }));
    const replies: unknown[] = [];
    raw.on('message', (message) => replies.push(JSON.parse(String(message))));
    await waitFor(() => replies.some((reply) => (reply as { id?: unknown }).id === 1), { what: 'the error reply' });
    raw.close();

    const response = await fetch(`${server.httpUrl}/healthz`);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ status: 'ok' });
    expect(await workerClient.ready()).toMatchObject({ role: 'worker' });
  });

  it('reconnects and re-registers after the server restarts', async () => {
    await using data = await createTempDir();
    await using workdir = await createTempDir();
    const first = await startTestServer({ dataDir: data.path });
    const port = first.port;
    await using worker = await createWorker({
      serverUrl: first.url,
      token: TEST_WORKER_TOKEN,
      workdir: workdir.path,
      reconnect: FAST_RECONNECT,
    });
    await worker.registered;
    await first.close();

    await using second = await startTestServer({ dataDir: data.path, port });
    expect(second.registry.get(worker.workerId)?.state).toBe('offline');
    await waitFor(() => second.registry.get(worker.workerId)?.state === 'online', { what: 're-registration' });
    await waitFor(() => worker.stats().registrations === 2, { what: 'the worker to see its re-registration' });

    const result = await second.dispatcher.dispatch({
      workerId: worker.workerId,
      toolName: 'echo',
      args: { text: 'again' },
      timeoutMs: 5_000,
    });
    expect(result.output).toBe('again');
  });

  it('keeps a result finished while the link was down and delivers it after the reconnect', async () => {
    await using data = await createTempDir();
    await using workdir = await createTempDir();
    await using server = await startTestServer({ dataDir: data.path });
    await using proxy = await startTcpProxy({ host: server.host, port: server.port });
    await using worker = await createWorker({
      serverUrl: proxy.url,
      token: TEST_WORKER_TOKEN,
      workdir: workdir.path,
      reconnect: FAST_RECONNECT,
    });
    await worker.registered;

    const pending = server.dispatcher.dispatch({
      workerId: worker.workerId,
      toolName: 'echo',
      args: { text: 'survived', delayMs: 300 },
      timeoutMs: 30_000,
    });
    await waitFor(() => worker.stats().running === 1, { what: 'the job to start' });
    proxy.cut();
    await waitFor(() => worker.stats().undelivered === 1, { what: 'the job to finish offline' });
    await waitFor(() => server.registry.get(worker.workerId)?.state === 'offline', { what: 'the server to notice' });

    proxy.restore();
    expect(await pending).toEqual({ output: 'survived', meta: { truncated: false } });
    await waitFor(() => worker.stats().undelivered === 0, { what: 'the acknowledgement' });
    // The result may be retried over the new socket before the registration (stored first) answers.
    await waitFor(() => worker.stats().registrations >= 2, { what: 'the registration after the reconnect' });
  });

  it('keeps the new registration when the replaced socket closes late', async () => {
    await using data = await createTempDir();
    await using server = await startTestServer({ dataDir: data.path });
    const registration = createTestRegistration(['echo']);
    const calls: Record<'old' | 'new', string[]> = { old: [], new: [] };
    const oldClient = createMolfClient({ url: server.url, token: TEST_WORKER_TOKEN });
    await using newClient = createMolfClient({ url: server.url, token: TEST_WORKER_TOKEN });
    const subscribe = (client: typeof newClient, into: string[]) =>
      new Promise<void>((resolve) => {
        client.rpc.worker.jobs.subscribe(
          { registration },
          {
            onData: ({ data }) => {
              if (data.type === 'registered') resolve();
              if (data.type === 'call') into.push(data.job.toolCallId);
            },
          },
        );
      });

    await subscribe(oldClient, calls.old);
    await subscribe(newClient, calls.new);
    // The old socket closes only after the new registration took over.
    await oldClient.close();
    await new Promise((resolve) => setTimeout(resolve, 50));

    expect(server.registry.get(registration.workerId)?.state).toBe('online');
    const result = server.dispatcher.dispatch({
      workerId: registration.workerId,
      toolName: 'echo',
      args: { text: 'x' },
      timeoutMs: 5_000,
    });
    await waitFor(() => calls.new.length === 1, { what: 'the call on the new registration' });
    expect(calls.old).toEqual([]);
    const [toolCallId] = calls.new;
    await newClient.rpc.worker.result.mutate({
      workerId: registration.workerId,
      toolCallId: toolCallId as never,
      result: { output: 'from new' },
    });
    expect(await result).toEqual({ output: 'from new' });
  });

  it('fails calls held by a worker process that was replaced by a new one', async () => {
    await using data = await createTempDir();
    await using workdir = await createTempDir();
    await using server = await startTestServer({ dataDir: data.path });
    const first = await createWorker({
      serverUrl: server.url,
      token: TEST_WORKER_TOKEN,
      workdir: workdir.path,
      tools: [stuckTool],
    });
    await first.registered;
    const pending = server.dispatcher.dispatch({
      workerId: first.workerId,
      toolName: 'stuck',
      args: { text: 'x' },
      timeoutMs: 60_000,
    });
    await waitFor(() => first.stats().running === 1, { what: 'the job to start' });

    // Same workdir, so same worker id, but a new process: the old one's call can never finish.
    await using second = await createWorker({ serverUrl: server.url, token: TEST_WORKER_TOKEN, workdir: workdir.path });
    expect(second.workerId).toBe(first.workerId);
    await second.registered;
    expect((await pending).meta?.errorKind).toBe('worker_restarted');
    // The replaced process stops by itself instead of fighting for the id.
    await expect(first.stopped).rejects.toMatchObject({ code: 'worker_replaced' });
    expect(server.registry.get(second.workerId)?.state).toBe('online');
  });

  it('carries 1 MiB results, 50 in flight, without hitting the payload limit', async () => {
    await using link = await startTestLink();
    const text = 'a'.repeat(1024 * 1024);

    const results = await dispatchMany(link, { count: 50, toolName: 'echo', args: { text }, timeoutMs: 30_000 });
    expect(results.every((result) => result.error === undefined && result.output.length === text.length)).toBe(true);
  });

  it('answers a call to an offline or unknown worker with a clear failure', async () => {
    await using data = await createTempDir();
    await using workdir = await createTempDir();
    await using server = await startTestServer({ dataDir: data.path });
    const worker = await createWorker({ serverUrl: server.url, token: TEST_WORKER_TOKEN, workdir: workdir.path });
    await worker.registered;
    await worker.close();
    await waitFor(() => server.registry.get(worker.workerId)?.state === 'offline', { what: 'offline' });

    const offline = await server.dispatcher.dispatch({
      workerId: worker.workerId,
      toolName: 'echo',
      args: { text: 'x' },
      timeoutMs: 1_000,
    });
    expect(offline.meta?.errorKind).toBe('worker_offline');
    const unknown = await server.dispatcher.dispatch({
      workerId: randomUUID() as WorkerId,
      toolName: 'echo',
      args: { text: 'x' },
      timeoutMs: 1_000,
    });
    expect(unknown.meta?.errorKind).toBe('worker_not_found');
  });

  it('persists the worker registry across server restarts', async () => {
    await using data = await createTempDir();
    await using workdir = await createTempDir();
    const server = await startTestServer({ dataDir: data.path });
    const worker = await createWorker({
      serverUrl: server.url,
      token: TEST_WORKER_TOKEN,
      workdir: workdir.path,
      name: 'kept',
    });
    await worker.registered;
    await worker.close();
    await server.close();

    const state = JSON.parse(await readFile(join(data.path, 'workers', worker.workerId, 'state.json'), 'utf8'));
    expect(state).toMatchObject({ name: 'kept', online: false });
    await using restarted = await startTestServer({ dataDir: data.path });
    expect(restarted.registry.list()).toMatchObject([{ workerId: worker.workerId, name: 'kept', state: 'offline' }]);
  });
});

describe('worker identity and workdir', () => {
  it('keeps its id across restarts and regenerates a corrupt worker.json', async () => {
    await using data = await createTempDir();
    await using workdir = await createTempDir();
    await using server = await startTestServer({ dataDir: data.path });
    const first = await createWorker({ serverUrl: server.url, token: TEST_WORKER_TOKEN, workdir: workdir.path });
    await first.close();
    const again = await createWorker({ serverUrl: server.url, token: TEST_WORKER_TOKEN, workdir: workdir.path });
    await again.close();
    expect(again.workerId).toBe(first.workerId);
    expect(await readFile(join(workdir.path, '.molf', '.gitignore'), 'utf8')).toBe('*\n');

    await writeFile(join(workdir.path, '.molf', 'worker.json'), '{"workerId": "garbage');
    const fresh = await createWorker({ serverUrl: server.url, token: TEST_WORKER_TOKEN, workdir: workdir.path });
    await fresh.close();
    expect(fresh.workerId).not.toBe(first.workerId);
    expect(JSON.parse(await readFile(join(workdir.path, '.molf', 'worker.json'), 'utf8')).workerId).toBe(
      fresh.workerId,
    );
  });

  it('refuses an invalid worker name at start with the failing field', async () => {
    await using workdir = await createTempDir();
    await expect(
      createWorker({
        serverUrl: 'ws://127.0.0.1:1',
        token: TEST_WORKER_TOKEN,
        workdir: workdir.path,
        name: 'x'.repeat(200),
      }),
    ).rejects.toMatchObject({ code: 'invalid_input', field: 'name' });
  });

  it('refuses a workdir that does not exist', async () => {
    await expect(
      createWorker({ serverUrl: 'ws://127.0.0.1:1', token: TEST_WORKER_TOKEN, workdir: '/nonexistent/molf-test' }),
    ).rejects.toMatchObject({ code: 'workdir_invalid', message: /does not exist/ });
  });
});

describe('large results', () => {
  const bigTool = defineToolHandler({
    definition: { ...toolDefinitions.echo, name: 'big' },
    run: async (args) => ({ output: args.text.repeat(300 * 1024), meta: { truncated: false } }),
  });

  it('replaces a result too large for the link by a too_large failure instead of retrying forever', async () => {
    await using link = await startTestLink({
      server: { maxPayloadBytes: 1024 * 1024 },
      worker: { tools: [bigTool], maxResultBytes: 200 * 1024 },
    });
    const { server, worker } = link;
    const result = await server.dispatcher.dispatch({
      workerId: worker.workerId,
      toolName: 'big',
      args: { text: 'a' },
      timeoutMs: 60_000,
    });
    expect(result.meta?.errorKind).toBe('too_large');
    expect(result.error).toContain('more than the 204800 bytes');
  });

  it('keeps batched deliveries under the server message limit when many results finish at once', async () => {
    await using link = await startTestLink({
      server: { maxPayloadBytes: 1024 * 1024 },
      worker: { tools: [bigTool], maxDeliveryBytesInFlight: 700 * 1024 },
    });
    const { worker } = link;
    // 20 results of 300 KiB finish together: 6 MiB, far over one 1 MiB message.
    const results = await dispatchMany(link, { count: 20, toolName: 'big', args: { text: 'a' }, timeoutMs: 60_000 });
    expect(results.map((result) => result.output.length)).toEqual(Array(20).fill(300 * 1024));
    expect(worker.stats().registrations).toBe(1);
  });
});

describe('link failures', () => {
  it('re-registers after a spell where the server refused its token', async () => {
    await using data = await createTempDir();
    await using otherData = await createTempDir();
    await using workdir = await createTempDir();
    const first = await startTestServer({ dataDir: data.path });
    const port = first.port;
    const logLines: string[] = [];
    await using worker = await createWorker({
      serverUrl: first.url,
      token: TEST_WORKER_TOKEN,
      workdir: workdir.path,
      reconnect: FAST_RECONNECT,
      logger: await createLogger({
        name: 'worker',
        level: 'error',
        destination: new Writable({
          write(chunk, _encoding, callback) {
            logLines.push(String(chunk));
            callback();
          },
        }),
      }),
    });
    await worker.registered;
    await first.close();

    // A server that doesn't know this token answers for a while…
    const impostor = await startTestServer({
      dataDir: otherData.path,
      port,
      tokens: { client: 'molf_c_some-other-client-token', worker: 'molf_w_some-other-worker-token' },
    });
    await waitFor(() => logLines.some((line) => line.includes('server refused the connection')), {
      what: 'a refusal',
    });
    await impostor.close();

    // …then the real one is back.
    await using back = await startTestServer({ dataDir: data.path, port });
    await waitFor(() => back.registry.get(worker.workerId)?.state === 'online', { what: 're-registration' });
    const result = await back.dispatcher.dispatch({
      workerId: worker.workerId,
      toolName: 'echo',
      args: { text: 'ok' },
    });
    expect(result.output).toBe('ok');
  });

  it("refuses a worker id to another worker credential, and that credential's results", async () => {
    await using data = await createTempDir();
    await using workdir = await createTempDir();
    await using server = await createServer({ port: 0, dataDir: data.path });
    const owner = await server.credentials.create({ role: 'worker', label: 'machine a' });
    const other = await server.credentials.create({ role: 'worker', label: 'machine b' });
    await using worker = await createWorker({ serverUrl: server.url, token: owner.token, workdir: workdir.path });
    await worker.registered;

    await using intruder = await createWorker({
      serverUrl: server.url,
      token: other.token,
      workdir: workdir.path,
      reconnect: FAST_RECONNECT,
    });
    await expect(intruder.registered).rejects.toMatchObject({
      code: 'forbidden',
      message: expect.stringContaining(`molf token revoke ${owner.credential.id}`),
    });
    expect(server.registry.get(worker.workerId)?.state).toBe('online');

    await using otherClient = createMolfClient({ url: server.url, token: other.token });
    const pending = server.dispatcher.dispatch({
      workerId: worker.workerId,
      toolName: 'echo',
      args: { text: 'real', delayMs: 300 },
    });
    await waitFor(() => worker.stats().running === 1, { what: 'the call to start' });
    const forged = await otherClient.rpc.worker.result
      .mutate({ workerId: worker.workerId, toolCallId: 'guessed' as never, result: { output: 'forged' } })
      .catch((error: unknown) => error);
    expect(errorCode(forged)).toBe('forbidden');
    expect(await pending).toEqual({ output: 'real', meta: { truncated: false } });

    // Revoking the owner frees the id for the other credential.
    await worker.close();
    await server.credentials.revoke(owner.credential.id);
    await using successor = await createWorker({ serverUrl: server.url, token: other.token, workdir: workdir.path });
    await successor.registered;
    expect(successor.workerId).toBe(worker.workerId);
  });

  it("lets the server's own fixed worker token take over a project's worker id (molf up after molf server)", async () => {
    await using data = await createTempDir();
    await using workdir = await createTempDir();
    const stored = await startTestServer({ dataDir: data.path, tokens: {} });
    const minted = await stored.credentials.create({ role: 'worker', label: 'machine a' });
    const first = await createWorker({ serverUrl: stored.url, token: minted.token, workdir: workdir.path });
    await first.registered;
    await first.close();
    await stored.close();

    await using withFixed = await startTestServer({ dataDir: data.path });
    await using second = await createWorker({
      serverUrl: withFixed.url,
      token: TEST_WORKER_TOKEN,
      workdir: workdir.path,
    });
    await second.registered;
    expect(second.workerId).toBe(first.workerId);
  });

  it('notices a half-open link from the missing pong and re-registers within the pong timeout', async () => {
    await using data = await createTempDir();
    await using workdir = await createTempDir();
    await using server = await startTestServer({ dataDir: data.path });
    await using proxy = await startTcpProxy({ host: server.host, port: server.port });
    await using worker = await createWorker({
      serverUrl: proxy.url,
      token: TEST_WORKER_TOKEN,
      workdir: workdir.path,
      reconnect: FAST_RECONNECT,
      keepAlive: { intervalMs: 100, pongTimeoutMs: 200 },
    });
    await worker.registered;

    proxy.freeze();
    // ws would wait 30 s for a close handshake the dead peer never answers; 10 s is ample here.
    await waitFor(() => worker.stats().registrations === 2, { what: 're-registration' });
  });

  it('replays a cancel that was lost in a half-open link, so the cancelled tool stops', async () => {
    await using data = await createTempDir();
    await using workdir = await createTempDir();
    await using server = await startTestServer({ dataDir: data.path });
    await using proxy = await startTcpProxy({ host: server.host, port: server.port });
    await using worker = await createWorker({
      serverUrl: proxy.url,
      token: TEST_WORKER_TOKEN,
      workdir: workdir.path,
      reconnect: FAST_RECONNECT,
      keepAlive: { intervalMs: 100, pongTimeoutMs: 200 },
    });
    await worker.registered;
    const controller = new AbortController();
    const pending = server.dispatcher.dispatch({
      workerId: worker.workerId,
      toolName: 'echo',
      args: { text: 'long', delayMs: 60_000 },
      signal: controller.signal,
    });
    await waitFor(() => worker.stats().running === 1, { what: 'the call to start' });

    proxy.freeze();
    controller.abort();
    expect((await pending).meta?.errorKind).toBe('cancelled');
    await waitFor(() => worker.stats().cancelled === 1 && worker.stats().running === 0, {
      what: 'the replayed cancel to stop the tool',
    });
  });

  it('keeps result batches under the message limit even when JSON escaping inflates them', async () => {
    const controlCharacters = defineToolHandler({
      definition: { ...toolDefinitions.echo, name: 'binary_dump' },
      // 100k control characters: 6 bytes each in JSON, so 600 KB per result.
      run: async () => ({ output: '\u0001'.repeat(100_000), meta: { truncated: false } }),
    });
    await using link = await startTestLink({
      server: { maxPayloadBytes: 1024 * 1024 },
      worker: { tools: [controlCharacters], maxDeliveryBytesInFlight: 900 * 1024 },
    });
    const { worker } = link;
    const results = await dispatchMany(link, {
      count: 6,
      toolName: 'binary_dump',
      args: { text: '' },
      timeoutMs: 20_000,
    });
    expect(results.map((result) => result.output.length)).toEqual(Array(6).fill(100_000));
    expect(worker.stats().registrations).toBe(1);
  });
});

import { randomUUID } from 'node:crypto';
import { createSilentLogger } from '@molf/logging';
import type { JobMessage, ToolCallId, WorkerRegistration } from '@molf/protocol';
import type { TrackedEnvelope } from '@trpc/server';
import { describe, expect, it } from 'vitest';
import { openFileStateDocuments } from '../state/index.ts';
import { createTempDir, createTestRegistration } from '../testing/test-link.ts';
import { createJobDispatcher } from './job-dispatcher.ts';
import { loadWorkerRegistry } from './worker-registry.ts';

async function setUp(dataDir: string, offlineWindowMs?: number) {
  const logger = createSilentLogger();
  const registry = await loadWorkerRegistry({ documents: openFileStateDocuments({ dataDir, logger }), logger });
  const dispatcher = createJobDispatcher({
    registry,
    logger,
    serverVersion: 'test',
    ...(offlineWindowMs === undefined ? {} : { offlineWindowMs }),
  });
  const registration = createTestRegistration(['echo']);
  const owner = { credentialId: 'test', isActive: () => true, mayClaimAny: false };
  const register = async (registration: WorkerRegistration) => {
    const outcome = await registry.register(registration, owner);
    if (outcome.type !== 'registered') throw new Error('registration refused');
    return outcome;
  };
  return { registry, dispatcher, registration, register };
}

/** Reads `count` messages from a stream, then stops it. */
async function take(stream: AsyncGenerator<TrackedEnvelope<JobMessage>>, count: number) {
  const taken: Array<{ id: string; message: JobMessage }> = [];
  while (taken.length < count) {
    const next = await stream.next();
    if (next.done === true) break;
    const [id, message] = next.value;
    taken.push({ id, message });
  }
  await stream.return(undefined);
  return taken;
}

describe('job dispatcher streams', () => {
  it('resumes after the last event id a worker saw, without resending earlier calls', async () => {
    await using data = await createTempDir();
    const { registry, dispatcher, registration, register } = await setUp(data.path);
    const first = (await register(registration)).lease;
    const calls = ['a', 'b', 'c'].map((text) =>
      dispatcher.dispatch({ workerId: registration.workerId, toolName: 'echo', args: { text }, timeoutMs: 10_000 }),
    );
    const seen = await take(dispatcher.stream({ lease: first, lastEventId: null, signal: undefined }), 4);
    expect(seen.map(({ message }) => message.type)).toEqual(['registered', 'call', 'call', 'call']);
    registry.release(first);

    // The worker received the first call before the link dropped.
    const lastSeen = seen[1]?.id;
    const second = (await register(registration)).lease;
    const replayed = await take(dispatcher.stream({ lease: second, lastEventId: lastSeen, signal: undefined }), 3);
    expect(replayed.map(({ message }) => (message.type === 'call' ? message.job.args.text : message.type))).toEqual([
      'registered',
      'b',
      'c',
    ]);

    dispatcher.close();
    await registry.flush();
    expect((await Promise.all(calls)).every((result) => result.meta?.errorKind === 'cancelled')).toBe(true);
  });

  it('replays every pending call when the event id comes from before a server restart', async () => {
    await using data = await createTempDir();
    const { registry, dispatcher, registration, register } = await setUp(data.path);
    const lease = (await register(registration)).lease;
    const call = dispatcher.dispatch({
      workerId: registration.workerId,
      toolName: 'echo',
      args: { text: 'x' },
      timeoutMs: 10_000,
    });
    const seen = await take(dispatcher.stream({ lease, lastEventId: 'deadbeef:99', signal: undefined }), 2);
    expect(seen.map(({ message }) => message.type)).toEqual(['registered', 'call']);
    dispatcher.close();
    await call;
    await registry.flush();
  });

  it('ends the stream of a registration that a newer one replaced', async () => {
    await using data = await createTempDir();
    const { registry, dispatcher, registration, register } = await setUp(data.path);
    const old = (await register(registration)).lease;
    const stream = dispatcher.stream({ lease: old, lastEventId: null, signal: undefined });
    await stream.next();
    const pendingNext = stream.next();
    // The same process re-registering (a reconnect) ends the old stream without a 'replaced'.
    await register(registration);
    expect((await pendingNext).done).toBe(true);
    expect(registry.release(old)).toBe(false);
    expect(registry.get(registration.workerId)?.state).toBe('online');
    await registry.flush();
  });

  it('tells a stream it was replaced when another process took the worker id', async () => {
    await using data = await createTempDir();
    const { registry, dispatcher, registration, register } = await setUp(data.path);
    const old = (await register(registration)).lease;
    const stream = dispatcher.stream({ lease: old, lastEventId: null, signal: undefined });
    await stream.next();
    const pendingNext = stream.next();
    await register({ ...registration, instanceId: randomUUID() });
    expect((await pendingNext).value?.[1]).toEqual({ type: 'replaced' });
    expect((await stream.next()).done).toBe(true);
    await registry.flush();
  });

  it('replays a cancel until the worker answers the cancelled call', async () => {
    await using data = await createTempDir();
    const { registry, dispatcher, registration, register } = await setUp(data.path);
    const first = (await register(registration)).lease;
    const controller = new AbortController();
    const call = dispatcher.dispatch({
      workerId: registration.workerId,
      toolName: 'echo',
      args: { text: 'x' },
      timeoutMs: 10_000,
      signal: controller.signal,
    });
    const delivered = await take(dispatcher.stream({ lease: first, lastEventId: null, signal: undefined }), 2);
    controller.abort();
    await call;

    // The cancel went into a socket that was already dead: the worker resumes after the call.
    const resumed = (await register(registration)).lease;
    const replay = await take(
      dispatcher.stream({ lease: resumed, lastEventId: delivered[1]?.id, signal: undefined }),
      2,
    );
    expect(replay.map(({ message }) => message.type)).toEqual(['registered', 'cancel']);

    // Once the worker answers the cancelled call, the cancel is no longer replayed.
    const toolCallId = replay[1]?.message.type === 'cancel' ? replay[1].message.toolCallId : undefined;
    expect(
      dispatcher.acceptResult({
        workerId: registration.workerId,
        toolCallId: toolCallId as never,
        result: { output: '' },
      }),
    ).toBe(false);
    const after = (await register(registration)).lease;
    const stop = new AbortController();
    const stream = dispatcher.stream({ lease: after, lastEventId: delivered[1]?.id, signal: stop.signal });
    expect((await stream.next()).value?.[1].type).toBe('registered');
    const next = stream.next();
    const quiet = await Promise.race([next, new Promise((resolve) => setTimeout(() => resolve('nothing'), 50))]);
    expect(quiet).toBe('nothing');
    stop.abort();
    expect((await next).done).toBe(true);
    dispatcher.close();
    await registry.flush();
  });

  it('refuses to reuse the id of a cancelled call the worker has not answered yet', async () => {
    await using data = await createTempDir();
    const { registry, dispatcher, registration, register } = await setUp(data.path);
    const lease = (await register(registration)).lease;
    const controller = new AbortController();
    const toolCallId = 'reused' as ToolCallId;
    const call = dispatcher.dispatch({
      workerId: registration.workerId,
      toolName: 'echo',
      args: { text: 'old' },
      toolCallId,
      signal: controller.signal,
    });
    await take(dispatcher.stream({ lease, lastEventId: null, signal: undefined }), 2);
    controller.abort();
    await call;

    const retry = await dispatcher.dispatch({
      workerId: registration.workerId,
      toolName: 'echo',
      args: { text: 'new' },
      toolCallId,
    });
    expect(retry.meta?.errorKind).toBe('invalid_arguments');
    expect(retry.error).toContain('still in use');

    // Once the worker answers the old call, the id is free again.
    await dispatcher.acceptResult({ workerId: registration.workerId, toolCallId, result: { output: 'ran with old' } });
    const again = dispatcher.dispatch({
      workerId: registration.workerId,
      toolName: 'echo',
      args: { text: 'new' },
      toolCallId,
    });
    dispatcher.close();
    expect((await again).meta?.errorKind).toBe('cancelled');
    await registry.flush();
  });
});

describe('a worker that goes offline with calls pending', () => {
  it('fails its calls as worker_offline when it does not come back within the offline window', async () => {
    await using data = await createTempDir();
    const { registry, dispatcher, registration, register } = await setUp(data.path, 50);
    const lease = (await register(registration)).lease;
    const delivered = dispatcher.dispatch({
      workerId: registration.workerId,
      toolName: 'echo',
      args: { text: 'running' },
      timeoutMs: 600_000,
    });
    await take(dispatcher.stream({ lease, lastEventId: null, signal: undefined }), 2);
    const queued = dispatcher.dispatch({
      workerId: registration.workerId,
      toolName: 'echo',
      args: { text: 'queued' },
      timeoutMs: 600_000,
    });
    registry.release(lease);
    dispatcher.onOffline(registration.workerId);
    const [ran, notRun] = await Promise.all([delivered, queued]);
    expect(ran.meta?.errorKind).toBe('worker_offline');
    expect(ran.error).toContain('outcome of the call is unknown');
    expect(notRun.meta?.errorKind).toBe('worker_offline');
    expect(notRun.error).toContain('was not run');
    expect(dispatcher.pendingCount(registration.workerId)).toBe(0);
    await registry.flush();
  });

  it('keeps the calls of a worker that reconnects within the window, and takes its result', async () => {
    await using data = await createTempDir();
    const { registry, dispatcher, registration, register } = await setUp(data.path, 200);
    const lease = (await register(registration)).lease;
    const call = dispatcher.dispatch({
      workerId: registration.workerId,
      toolName: 'echo',
      args: { text: 'x' },
      timeoutMs: 600_000,
    });
    const seen = await take(dispatcher.stream({ lease, lastEventId: null, signal: undefined }), 2);
    registry.release(lease);
    dispatcher.onOffline(registration.workerId);
    const again = await register(registration);
    dispatcher.onRegistered({
      workerId: registration.workerId,
      instanceId: registration.instanceId,
      previousInstanceId: again.previousInstanceId,
    });
    await new Promise((resolve) => setTimeout(resolve, 400));
    const toolCallId = seen[1]?.message.type === 'call' ? seen[1].message.job.toolCallId : undefined;
    expect(
      dispatcher.acceptResult({
        workerId: registration.workerId,
        toolCallId: toolCallId as ToolCallId,
        result: { output: 'done' },
      }),
    ).toBe(true);
    expect((await call).output).toBe('done');
    await registry.flush();
  });
});

describe('typed worker requests', () => {
  async function sendRequest(dataDir: string) {
    const context = await setUp(dataDir);
    const lease = (await context.register(context.registration)).lease;
    const outcome = context.dispatcher.request({
      workerId: context.registration.workerId,
      request: { method: 'instructions/read', params: { forPath: 'src/a.ts' } },
      timeoutMs: 10_000,
    });
    const [, delivered] = await take(context.dispatcher.stream({ lease, lastEventId: null, signal: undefined }), 2);
    if (delivered?.message.type !== 'request') throw new Error(`expected a request, got ${delivered?.message.type}`);
    return { ...context, lease, outcome, message: delivered.message };
  }

  it('sends a request of its own kind on the job stream and returns the typed answer', async () => {
    await using data = await createTempDir();
    const { dispatcher, registration, outcome, message } = await sendRequest(data.path);
    expect(message.request).toEqual({ method: 'instructions/read', params: { forPath: 'src/a.ts' } });
    const files = [{ path: 'src/AGENTS.md', text: 'use tabs', truncated: false }];
    expect(
      dispatcher.acceptResponse({
        workerId: registration.workerId,
        requestId: message.requestId,
        response: { method: 'instructions/read', result: { files } },
      }),
    ).toBe(true);
    expect(await outcome).toEqual({ ok: true, result: { files } });
  });

  it('refuses an answer of another kind than the request', async () => {
    await using data = await createTempDir();
    const { dispatcher, registration, outcome, message } = await sendRequest(data.path);
    dispatcher.acceptResponse({
      workerId: registration.workerId,
      requestId: message.requestId,
      response: { method: 'paths/resolve', result: { paths: [] } },
    });
    expect(await outcome).toMatchObject({
      ok: false,
      errorKind: 'internal',
      message: expect.stringContaining('paths/resolve'),
    });
  });

  it('passes on the reason a worker could not answer', async () => {
    await using data = await createTempDir();
    const { dispatcher, registration, outcome, message } = await sendRequest(data.path);
    dispatcher.acceptResponse({
      workerId: registration.workerId,
      requestId: message.requestId,
      response: { error: { message: 'instructions/read failed: EACCES' } },
    });
    expect(await outcome).toEqual({ ok: false, errorKind: 'internal', message: 'instructions/read failed: EACCES' });
  });

  it('takes no tool result as the answer to a request, nor an answer after the request ended', async () => {
    await using data = await createTempDir();
    const { dispatcher, registration, outcome, message } = await sendRequest(data.path);
    expect(
      dispatcher.acceptResult({
        workerId: registration.workerId,
        toolCallId: message.requestId,
        result: { output: 'x' },
      }),
    ).toBe(false);
    dispatcher.close();
    expect(await outcome).toMatchObject({ ok: false, errorKind: 'cancelled' });
    expect(
      dispatcher.acceptResponse({
        workerId: registration.workerId,
        requestId: message.requestId,
        response: { method: 'instructions/read', result: { files: [] } },
      }),
    ).toBe(false);
  });

  it('fails a request to a worker that is not connected without sending it', async () => {
    await using data = await createTempDir();
    const { dispatcher, registration } = await setUp(data.path);
    const outcome = await dispatcher.request({
      workerId: registration.workerId,
      request: { method: 'paths/resolve', params: { paths: ['a'] } },
      timeoutMs: 10_000,
    });
    expect(outcome).toMatchObject({ ok: false, errorKind: 'worker_not_found' });
  });

  it('stops waiting when the request is aborted, and sends no cancel to the worker', async () => {
    await using data = await createTempDir();
    const { dispatcher, registration, register } = await setUp(data.path);
    const lease = (await register(registration)).lease;
    const controller = new AbortController();
    const outcome = dispatcher.request({
      workerId: registration.workerId,
      request: { method: 'paths/resolve', params: { paths: ['a'] } },
      timeoutMs: 10_000,
      signal: controller.signal,
    });
    await take(dispatcher.stream({ lease, lastEventId: null, signal: undefined }), 2);
    controller.abort();
    expect(await outcome).toMatchObject({ ok: false, errorKind: 'cancelled' });
    const replay = await take(dispatcher.stream({ lease, lastEventId: null, signal: undefined }), 1);
    expect(replay.map(({ message }) => message.type)).toEqual(['registered']);
    expect(dispatcher.pendingCount(registration.workerId)).toBe(0);
  });
});

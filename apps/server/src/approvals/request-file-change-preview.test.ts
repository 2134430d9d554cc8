import { randomUUID } from 'node:crypto';
import { createSilentLogger } from '@molf/logging';
import type { JobMessage, WorkerId } from '@molf/protocol';
import { describe, expect, it } from 'vitest';
import { openFileStateDocuments } from '../state/index.ts';
import { createTempDir, createTestRegistration } from '../testing/test-link.ts';
import { createJobDispatcher } from '../workers/job-dispatcher.ts';
import { loadWorkerRegistry } from '../workers/worker-registry.ts';
import { requestFileChangePreview } from './request-file-change-preview.ts';

/** A real registry and dispatcher with one registered worker whose job stream the test reads (or not). */
async function setUp(dataDir: string) {
  const logger = createSilentLogger();
  const registry = await loadWorkerRegistry({ documents: openFileStateDocuments({ dataDir, logger }), logger });
  const dispatcher = createJobDispatcher({ registry, logger, serverVersion: 'test' });
  const registration = createTestRegistration(['edit_file', 'write_file']);
  const outcome = await registry.register(registration, {
    credentialId: 'test',
    isActive: () => true,
    mayClaimAny: false,
  });
  if (outcome.type !== 'registered') throw new Error('registration refused');
  return {
    registry,
    dispatcher,
    workerId: registration.workerId,
    /** The next request on the worker's job stream. */
    async nextRequest(): Promise<Extract<JobMessage, { type: 'request' }>> {
      const stream = dispatcher.stream({ lease: outcome.lease, lastEventId: null, signal: undefined });
      for await (const [, message] of stream) {
        if (message.type === 'request') {
          await stream.return(undefined);
          return message;
        }
      }
      throw new Error('the stream ended without a request');
    },
    async [Symbol.asyncDispose]() {
      dispatcher.close();
      await registry.flush();
    },
  };
}

const edit = { path: 'a.txt', oldString: 'a', newString: 'b' };

describe('requestFileChangePreview', () => {
  it('asks the worker with the call, its session and its read rules, and returns its answer', async () => {
    await using data = await createTempDir();
    await using context = await setUp(data.path);
    const readRules = [{ pattern: '*.env', action: 'deny' as const }];
    const preview = requestFileChangePreview({
      dispatcher: context.dispatcher,
      workerId: context.workerId,
      tool: 'edit_file',
      args: edit,
      sessionId: 's1',
      readRules,
      timeoutMs: 60_000,
    });
    const message = await context.nextRequest();
    expect(message.request).toEqual({
      method: 'file-change/preview',
      params: { tool: 'edit_file', args: edit, sessionId: 's1', readRules },
    });
    const answer = { path: 'a.txt', diff: '--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+b\n', truncated: false };
    context.dispatcher.acceptResponse({
      workerId: context.workerId,
      requestId: message.requestId,
      response: { method: 'file-change/preview', result: answer },
    });
    expect(await preview).toEqual(answer);
  });

  it('gives up on a worker that does not answer in time: a note and no diff, never a wait', async () => {
    await using data = await createTempDir();
    await using context = await setUp(data.path);
    const preview = await requestFileChangePreview({
      dispatcher: context.dispatcher,
      workerId: context.workerId,
      tool: 'write_file',
      args: { path: 'b.txt', content: 'x' },
      sessionId: 's1',
      readRules: [],
      timeoutMs: 50,
    });
    expect(preview).toEqual({
      path: 'b.txt',
      diff: '',
      truncated: false,
      note: 'No preview of the change: the worker did not answer within 50 ms.',
    });
    expect(context.dispatcher.pendingCount(context.workerId)).toBe(0);
  });

  it('says why when the worker is not there, and asks nothing for other tools', async () => {
    await using data = await createTempDir();
    await using context = await setUp(data.path);
    const missing = randomUUID() as WorkerId;
    const preview = await requestFileChangePreview({
      dispatcher: context.dispatcher,
      workerId: missing,
      tool: 'edit_file',
      args: edit,
      sessionId: 's1',
      readRules: [],
    });
    expect(preview?.note).toBe(
      `No preview of the change: the worker could not compute it (No worker with id ${missing} is registered.).`,
    );
    expect(
      await requestFileChangePreview({
        dispatcher: context.dispatcher,
        workerId: context.workerId,
        tool: 'shell_exec',
        args: { command: 'ls' },
        sessionId: 's1',
        readRules: [],
      }),
    ).toBeUndefined();
    expect(context.dispatcher.pendingCount()).toBe(0);
  });
});

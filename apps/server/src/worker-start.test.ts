import { Writable } from 'node:stream';
import { createLogger } from '@molf/logging';
import { createWorker } from '@molf/worker';
import { describe, expect, it } from 'vitest';
import { createTempDir, startTestServer, TEST_WORKER_TOKEN } from './testing/test-link.ts';

/** A logger that keeps every JSON line it writes. */
async function createRecordingLogger(name: string) {
  const lines: Array<{ level: number; msg: string }> = [];
  const destination = new Writable({
    write(chunk, _encoding, callback) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      callback();
    },
  });
  return { logger: await createLogger({ name, level: 'debug', destination }), lines };
}

describe('a worker starting in a new project', () => {
  it('sends its tool list only once registered, so its start logs no warning or error', async () => {
    await using data = await createTempDir();
    await using workdir = await createTempDir();
    await using server = await startTestServer({ dataDir: data.path });
    const { logger, lines } = await createRecordingLogger('worker');
    await using worker = await createWorker({
      serverUrl: server.url,
      token: TEST_WORKER_TOKEN,
      workdir: workdir.path,
      logger,
    });
    await worker.registered;
    // A round trip after the registration: anything the worker sent before it has been answered.
    const result = await server.dispatcher.dispatch({
      workerId: worker.workerId,
      toolName: 'echo',
      args: { text: 'after registration' },
    });
    expect(result.output).toBe('after registration');
    // warn is 40, error 50.
    expect(lines.filter((line) => line.level >= 40).map((line) => line.msg)).toEqual([]);
    expect(server.registry.get(worker.workerId)?.tools).toContain('read_file');
  });
});

import { X509Certificate } from 'node:crypto';
import { type AddressInfo, createServer as createTcpServer, type Socket } from 'node:net';
import { Writable } from 'node:stream';
import { createLogger } from '@molf/logging';
import { createWorker } from '@molf/worker';
import { describe, expect, it } from 'vitest';
import { createTempDir, startTestServer, TEST_WORKER_TOKEN, waitFor } from './testing/test-link.ts';
import { generateCertificate } from './tls/generate-certificate.ts';

/** Generous: the machine may be loaded; the waits end as soon as their condition holds. */
const WAIT = { timeoutMs: 120_000 };

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

/** A TCP port that takes each connection and drops it at once, like a server that is not there yet. */
async function startDroppingPort() {
  let connections = 0;
  const sockets = new Set<Socket>();
  const server = createTcpServer((socket) => {
    connections += 1;
    sockets.add(socket);
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    connections: () => connections,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

describe('a worker retrying a server', () => {
  it('logs once per state change (absent, refusing, back), not once per attempt', async () => {
    await using data = await createTempDir();
    await using otherData = await createTempDir();
    await using workdir = await createTempDir();
    const absent = await startDroppingPort();
    const { port } = absent;
    const { logger, lines } = await createRecordingLogger('worker');
    const problems = () => lines.filter((line) => line.level >= 40).map((line) => line.msg);
    await using worker = await createWorker({
      serverUrl: `ws://127.0.0.1:${port}`,
      token: TEST_WORKER_TOKEN,
      workdir: workdir.path,
      reconnect: { initialMs: 20, maxMs: 40 },
      logger,
    });

    // Absent: many attempts, one line.
    await waitFor(() => absent.connections() >= 6, { ...WAIT, what: 'six attempts on the absent server' });
    expect(problems()).toEqual([expect.stringContaining('cannot reach the Molf server')]);
    await absent.close();

    // Refusing: a server that does not know the token answers each attempt; one more line.
    const refusals = await createRecordingLogger('server');
    const impostor = await startTestServer({
      dataDir: otherData.path,
      port,
      tokens: { client: 'molf_c_some-other-client-token', worker: 'molf_w_some-other-worker-token' },
      logger: refusals.logger,
    });
    await waitFor(() => refusals.lines.filter((line) => line.msg.includes('refused')).length >= 4, {
      ...WAIT,
      what: 'four refused attempts',
    });
    expect(problems()).toEqual([
      expect.stringContaining('cannot reach the Molf server'),
      expect.stringContaining('server refused the connection'),
    ]);
    await impostor.close();

    // Back: the right server registers the worker, and the log says so once.
    await using back = await startTestServer({ dataDir: data.path, port });
    // (worker.registered rejected at the first refusal, as documented; the worker still retries.)
    await waitFor(() => back.registry.get(worker.workerId)?.state === 'online', { ...WAIT, what: 'registration' });
    await waitFor(() => worker.stats().registrations === 1, { ...WAIT, what: 'the worker to see its registration' });
    expect(lines.filter((line) => line.level === 30 && line.msg.includes('registered')).length).toBe(1);
    // Between the refusals and the registration the server was absent again for a moment: at
    // most one more line for that.
    expect(problems().length).toBeLessThanOrEqual(3);
  });
});

describe('a worker whose server renewed its certificate', () => {
  it('logs both fingerprints and how to re-pin, once, and sends the server nothing, also after it was connected', async () => {
    await using data = await createTempDir();
    await using workdir = await createTempDir();
    const first = await generateCertificate({ names: ['127.0.0.1'] });
    const renewed = await generateCertificate({ names: ['127.0.0.1'] });
    const pinned = new X509Certificate(first.cert).fingerprint256;
    const shown = new X509Certificate(renewed.cert).fingerprint256;
    const server = await startTestServer({ dataDir: data.path, tls: first });
    const { port } = server;
    const { logger, lines } = await createRecordingLogger('worker');
    await using worker = await createWorker({
      serverUrl: server.url,
      token: TEST_WORKER_TOKEN,
      trust: { type: 'pinned', fingerprint256: pinned, cert: first.cert },
      workdir: workdir.path,
      reconnect: { initialMs: 20, maxMs: 40 },
      logger,
    });
    await worker.registered;
    await server.close();

    // `molf server --renew-cert`: the same server, the same port, another certificate.
    const serverLog = await createRecordingLogger('server');
    await using renewedServer = await startTestServer({
      dataDir: data.path,
      port,
      tls: renewed,
      logger: serverLog.logger,
    });
    const untrusted = () => lines.filter((line) => line.level >= 50 && line.msg.includes('not the pinned one'));
    await waitFor(() => untrusted().length > 0, { ...WAIT, what: 'the worker to say why it sends nothing' });
    const [line] = untrusted();
    expect(line?.msg).toContain(pinned);
    expect(line?.msg).toContain(shown);
    expect(line?.msg).toContain(`molf trust ${renewedServer.url} --fingerprint ${shown}`);
    // More refused handshakes, no more lines: one per change, not one per attempt.
    const handshakes = () => serverLog.lines.filter((entry) => entry.msg === 'tls handshake failed').length;
    await waitFor(() => handshakes() >= 4, { ...WAIT, what: 'four refused handshakes' });
    expect(untrusted()).toHaveLength(1);
    // No connection reached the server's token check: the worker's token never left.
    expect(serverLog.lines.filter((entry) => entry.msg === 'connection authenticated')).toEqual([]);
    expect(renewedServer.registry.get(worker.workerId)?.state).not.toBe('online');
  });
});

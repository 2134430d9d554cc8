import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { createServer as createHttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createMolfClient, type MolfClient, redeemPairingCode } from '@molf/client/node';
import type { ApprovalEvent, SessionEvent } from '@molf/protocol';
import {
  createScratchDatabase,
  type FakeTurn,
  startFakeLlm,
  startPostgresCluster,
  startTcpBalancer,
} from '@molf/testkit';
import { createWorker } from '@molf/worker';
import { describe, expect, inject, it, onTestFailed } from 'vitest';
import { spawnListeningServer, spawnMolf, useTestScope, waitUntil } from '../testing/cli-test-kit.ts';

const CLIENT_TOKEN = 'molf_c_several-servers-client-token';
const WORKER_TOKEN = 'molf_w_several-servers-worker-token';
const scope = useTestScope('several');
const postgres = inject('postgres');
const unavailable = 'unavailable' in postgres ? postgres.unavailable : undefined;
/** Debian's libfaketime (package faketime, installed by .ci/run): a process whose clock is off. */
const FAKETIME_LIBRARY = '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1';
const noFaketime = existsSync(FAKETIME_LIBRARY)
  ? undefined
  : `${FAKETIME_LIBRARY} is missing (apt-get install faketime)`;
/** The environment of a process whose wall clock is `offset` off (e.g. "+1h"); its durations are true. */
const clockOff = (offset: string) => ({
  LD_PRELOAD: FAKETIME_LIBRARY,
  FAKETIME: offset,
  FAKETIME_DONT_FAKE_MONOTONIC: '1',
});

/** `molf server --database` as a real child process (its own data dir), resolved once it listens. */
async function startInstance(options: { databaseUrl: string; config: string; env?: NodeJS.ProcessEnv }) {
  const dataDir = await scope.tempDir();
  const started = await spawnListeningServer(
    ['--port', '0', '--data-dir', dataDir, '--config', options.config, '--database', options.databaseUrl],
    {
      env: {
        MOLF_CLIENT_TOKEN: CLIENT_TOKEN,
        MOLF_WORKER_TOKEN: WORKER_TOKEN,
        MOLF_LOG_FILE: 'none',
        MOLF_LOG_LEVEL: 'warn',
        ...options.env,
      },
    },
  );
  // What the server logged (warnings and worse, on its console), shown when the test fails: the
  // cause of a wait that timed out.
  let warnings = '';
  for (const stream of [started.child.stdout, started.child.stderr]) {
    stream?.on('data', (chunk: Buffer) => {
      warnings = (warnings + chunk.toString()).slice(-6_000);
    });
  }
  onTestFailed(() => {
    process.stderr.write(`--- what the server at ${started.url} logged last:\n${warnings}\n`);
  });
  return started;
}

/** `count` servers on one database, a worker connected to `workerUrl(servers)` (default the first's). */
async function startCluster(
  count: number,
  options: { databaseUrl: string; config: string; workerUrl?: (urls: string[]) => Promise<string> },
) {
  const servers = [];
  for (let index = 0; index < count; index += 1) servers.push(await startInstance(options));
  const urls = servers.map((server) => server.url);
  const workdir = await scope.tempDir();
  const worker = await createWorker({
    serverUrl: options.workerUrl === undefined ? (urls[0] as string) : await options.workerUrl(urls),
    token: WORKER_TOKEN,
    workdir,
    reconnect: { initialMs: 100, maxMs: 500 },
  });
  scope.cleanups.push(() => worker.close());
  await worker.registered;
  const clients = await Promise.all(urls.map((url) => connect(url)));
  // Every server knows the worker (its state reaches them through the database).
  for (const client of clients) {
    await waitUntil(
      async () => (await client.rpc.workers.list.query()).some((listed) => listed.workerId === worker.workerId),
      { what: 'the worker known to every server' },
    );
  }
  return { servers, clients, worker, workdir };
}

async function connect(url: string): Promise<MolfClient> {
  const client = createMolfClient({ url, token: CLIENT_TOKEN });
  scope.cleanups.push(() => client.close());
  await client.ready({ timeoutMs: 120_000 });
  return client;
}

/** A balancer in front of the servers at `urls`, to reach them through; its targets may change. */
async function balance(urls: readonly string[], targets: readonly number[]) {
  const ports = urls.map((url) => Number(new URL(url).port));
  const balancer = await startTcpBalancer({ targetPorts: targets.map((index) => ports[index] as number) });
  scope.cleanups.push(() => balancer.close());
  return {
    url: `ws://127.0.0.1:${balancer.port}`,
    /** New connections reach these servers only, and the open ones are cut. */
    moveTo(indexes: readonly number[]) {
      balancer.retarget(indexes.map((index) => ports[index] as number));
      balancer.dropConnections();
    },
  };
}

/**
 * Two servers, the worker reaching them through a balancer (first the servers at `targets`) with
 * shell_exec allowed, and a session made and prompted on the second: resolved once the prompt's
 * first command has started (it writes "started" to log.txt). Its turn runs on the first server.
 */
async function promptRunning(options: { databaseUrl: string; config: string; targets: number[]; prompt: string }) {
  let balancer: Awaited<ReturnType<typeof balance>> | undefined;
  const cluster = await startCluster(2, {
    databaseUrl: options.databaseUrl,
    config: options.config,
    workerUrl: async (urls) => {
      balancer = await balance(urls, options.targets);
      return balancer.url;
    },
  });
  const [onOne, onTwo] = cluster.clients as [MolfClient, MolfClient];
  await onOne.rpc.permissions.write.mutate({
    workerId: cluster.worker.workerId,
    text: '{ "*": "ask", "shell_exec": "allow" }',
  });
  const session = await onTwo.rpc.sessions.create.mutate({ workerId: cluster.worker.workerId });
  const seenOnTwo = follow(onTwo, session.sessionId);
  await onTwo.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: options.prompt });
  const log = join(cluster.workdir, 'log.txt');
  await waitUntil(async () => (await linesOf(log)).includes('started'), { what: 'the first command started' });
  return { ...cluster, onTwo, session, seenOnTwo, log, balancer: balancer as NonNullable<typeof balancer> };
}

/** The lines of a file the tool calls append to ('' when it does not exist). */
async function linesOf(path: string): Promise<string[]> {
  const text = await readFile(path, 'utf8').catch(() => '');
  return text.split('\n').filter((line) => line !== '');
}

/** A session's events as one client receives them. */
function follow(client: MolfClient, sessionId: string) {
  const events: SessionEvent[] = [];
  const subscription = client.rpc.sessions.events.subscribe(
    { sessionId },
    { onData: (envelope) => events.push(envelope.data) },
  );
  scope.cleanups.push(async () => subscription.unsubscribe());
  return events;
}

async function setUp(turns: FakeTurn[]) {
  const llm = await startFakeLlm({ turns });
  scope.cleanups.push(() => llm.close());
  const database = await createScratchDatabase(postgres && 'url' in postgres ? postgres.url : '');
  scope.cleanups.push(async () => database[Symbol.asyncDispose]());
  const config = join(await scope.tempDir(), 'molf.jsonc');
  await writeFile(config, JSON.stringify({ model: 'fake/m', providers: { fake: { baseURL: llm.baseURL } } }));
  return { llm, databaseUrl: database.url, config };
}

describe.skipIf(unavailable !== undefined)(
  `several molf servers on one database${unavailable === undefined ? '' : ` (skipped: ${unavailable})`}`,
  () => {
    it('runs a prompt sent to another server after the running turn, on the server that holds the session', async () => {
      const { llm, databaseUrl, config } = await setUp([
        { text: ['first ', 'answer ', 'streams ', 'slowly'], chunkDelayMs: 400 },
        { text: 'second answer' },
      ]);
      const { clients, worker } = await startCluster(2, { databaseUrl, config });
      const [onOne, onTwo] = clients as [MolfClient, MolfClient];
      const session = await onOne.rpc.sessions.create.mutate({ workerId: worker.workerId });
      const seenOnTwo = follow(onTwo, session.sessionId);

      expect(await onOne.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'first' })).toMatchObject({
        queued: false,
      });
      await waitUntil(() => llm.requests.length === 1, { what: 'the first model request' });
      expect(await onTwo.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'second' })).toMatchObject({
        queued: true,
      });
      await waitUntil(() => seenOnTwo.filter((event) => event.type === 'turn.ended').length === 2, {
        what: 'two turns ended, seen on the second server',
      });
      const { messages } = await onTwo.rpc.sessions.get.query({ sessionId: session.sessionId });
      expect(messages.map((message) => [message.role, 'text' in message ? message.text : ''])).toEqual([
        ['user', 'first'],
        ['assistant', 'first answer streams slowly'],
        ['user', 'second'],
        ['assistant', 'second answer'],
      ]);
      expect(llm.requests).toHaveLength(2);
      // Every event once, in order, on the server that did not run the turns.
      const seqs = seenOnTwo.map((event) => event.seq);
      expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
      expect(new Set(seqs).size).toBe(seqs.length);
    });

    it.each(['SIGKILL', 'SIGTERM'] as const)(
      'takes over the turn of a server stopped mid-turn (%s): the prompt is answered, each event seen once',
      async (signal) => {
        const { llm, databaseUrl, config } = await setUp([
          // The first chunk is the role's; the second carries "cut ".
          { text: ['cut ', 'off'], stallAfterChunks: 2 },
          { text: 'answered by the survivor' },
        ]);
        // The worker reaches the servers through a load balancer: one first, two when one is down.
        const { servers, clients, worker } = await startCluster(2, {
          databaseUrl,
          config,
          workerUrl: async (urls) => {
            const balancer = await startTcpBalancer({ targetPorts: urls.map((url) => Number(new URL(url).port)) });
            scope.cleanups.push(() => balancer.close());
            return `ws://127.0.0.1:${balancer.port}`;
          },
        });
        const [one] = servers as [(typeof servers)[number]];
        const [onOne, onTwo] = clients as [MolfClient, MolfClient];
        const session = await onOne.rpc.sessions.create.mutate({ workerId: worker.workerId });
        const seenOnTwo = follow(onTwo, session.sessionId);
        // Sent to two: the turn runs on one, where the worker is.
        await onTwo.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'survive this' });
        await waitUntil(() => seenOnTwo.some((event) => event.type === 'message.delta'), {
          what: 'the first chunk, seen on the second server',
        });

        process.kill(-(one.child.pid as number), signal);
        await waitUntil(() => seenOnTwo.some((event) => event.type === 'turn.ended'), {
          what: 'the turn ended on the surviving server',
          timeoutMs: 120_000,
        });
        // One end, the answer's: the cut-off turn has none (a server that stops says why instead).
        expect(
          seenOnTwo.filter((event) => event.type === 'turn.ended').map((event) => 'reason' in event && event.reason),
        ).toEqual(['completed']);
        const [cutOff] = seenOnTwo.filter((event) => event.type === 'turn.started') as Array<{ turnId: string }>;
        const lastOfCutOff = seenOnTwo.filter((event) => 'turnId' in event && event.turnId === cutOff?.turnId).at(-1);
        if (signal === 'SIGTERM') {
          expect(lastOfCutOff).toMatchObject({ type: 'error', message: expect.stringContaining('shutting down') });
        }
        const { messages } = await onTwo.rpc.sessions.get.query({ sessionId: session.sessionId });
        expect(messages.filter((message) => message.role === 'user').map((message) => message.text)).toEqual([
          'survive this',
        ]);
        expect(messages.at(-1)).toMatchObject({ role: 'assistant', text: 'answered by the survivor' });
        expect(llm.requests).toHaveLength(2);
        const seqs = seenOnTwo.map((event) => event.seq);
        expect(new Set(seqs).size).toBe(seqs.length);
        expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
      },
    );

    it('routes the tool calls of a turn to the server its worker moved to mid-turn: each runs once, its result reaches the turn', async () => {
      const { llm, databaseUrl, config } = await setUp([
        {
          toolCalls: [
            {
              id: 'call_1',
              name: 'shell_exec',
              arguments: { command: 'echo started >> log.txt; sleep 3; echo ran >> log.txt; echo first-done' },
            },
          ],
        },
        {
          toolCalls: [
            { id: 'call_2', name: 'shell_exec', arguments: { command: 'echo second >> log.txt; echo second-done' } },
          ],
        },
        { text: 'both ran' },
      ]);
      // The turn runs on the first server, where the worker is.
      const { onTwo, worker, session, seenOnTwo, log, balancer } = await promptRunning({
        databaseUrl,
        config,
        targets: [0],
        prompt: 'run both',
      });
      // The worker's link moves to the second server while the command runs.
      balancer.moveTo([1]);
      await waitUntil(
        async () =>
          (await onTwo.rpc.workers.list.query()).some(
            (listed) => listed.workerId === worker.workerId && listed.state === 'online',
          ) && worker.stats().registrations >= 2,
        { what: 'the worker connected again, to the second server' },
      );
      await waitUntil(() => seenOnTwo.some((event) => event.type === 'turn.ended'), { what: 'the turn ended' });
      expect(seenOnTwo.find((event) => event.type === 'turn.ended')).toMatchObject({ reason: 'completed' });
      expect(await linesOf(log)).toEqual(['started', 'ran', 'second']);
      const { messages } = await onTwo.rpc.sessions.get.query({ sessionId: session.sessionId });
      const results = messages.flatMap((message) => (message.role === 'tool' ? [message.output.split('\n')[0]] : []));
      expect(results).toEqual(['first-done', 'second-done']);
      expect(messages.at(-1)).toMatchObject({ role: 'assistant', text: 'both ran' });
      expect(llm.requests).toHaveLength(3);
      const seqs = seenOnTwo.map((event) => event.seq);
      expect(new Set(seqs).size).toBe(seqs.length);
    });

    it('cancels a routed call on the worker when the turn is aborted from another server', async () => {
      const { databaseUrl, config } = await setUp([
        {
          toolCalls: [
            { id: 'call_1', name: 'shell_exec', arguments: { command: 'echo started >> log.txt; sleep 60' } },
          ],
        },
      ]);
      const { onTwo, worker, session, seenOnTwo, balancer } = await promptRunning({
        databaseUrl,
        config,
        targets: [0],
        prompt: 'run long',
      });
      // The turn runs on the first server; the worker's link moves to the second.
      balancer.moveTo([1]);
      await waitUntil(() => worker.stats().registrations >= 2, { what: 'the worker connected again' });

      await onTwo.rpc.sessions.abort.mutate({ sessionId: session.sessionId });
      await waitUntil(() => seenOnTwo.some((event) => event.type === 'turn.ended'), { what: 'the turn ended' });
      expect(seenOnTwo.find((event) => event.type === 'turn.ended')).toMatchObject({ reason: 'aborted' });
      // The cancel went through the database to the server holding the worker, and stopped the command.
      await waitUntil(() => worker.stats().cancelled >= 1 && worker.stats().running === 0, {
        what: 'the running command cancelled on the worker',
      });
    });

    it("delivers a call's result once when the worker's server is killed mid-call: the worker reconnects, another server finishes the turn", async () => {
      const { llm, databaseUrl, config } = await setUp([
        {
          toolCalls: [
            {
              id: 'call_1',
              name: 'shell_exec',
              arguments: { command: 'echo started >> log.txt; sleep 4; echo ran >> log.txt; echo finished' },
            },
          ],
        },
        { text: 'taken over' },
      ]);
      const { servers, onTwo, session, seenOnTwo, log } = await promptRunning({
        databaseUrl,
        config,
        targets: [0, 1],
        prompt: 'run it once',
      });
      const [one] = servers as [(typeof servers)[number]];

      // The server running the turn and holding the worker dies; the command runs on.
      process.kill(-(one.child.pid as number), 'SIGKILL');
      await waitUntil(() => seenOnTwo.some((event) => event.type === 'turn.ended'), {
        what: 'the turn ended on the surviving server',
        timeoutMs: 120_000,
      });
      expect(seenOnTwo.find((event) => event.type === 'turn.ended')).toMatchObject({ reason: 'completed' });
      expect(await linesOf(log)).toEqual(['started', 'ran']);
      const { messages } = await onTwo.rpc.sessions.get.query({ sessionId: session.sessionId });
      const results = messages.flatMap((message) => (message.role === 'tool' ? [message] : []));
      expect(results).toHaveLength(1);
      expect(results[0]).toMatchObject({ toolCallId: 'call_1' });
      expect((results[0] as { output: string }).output.split('\n')[0]).toBe('finished');
      expect(messages.at(-1)).toMatchObject({ role: 'assistant', text: 'taken over' });
      // The model was asked again with the result, not with "no result".
      expect(llm.requests).toHaveLength(2);
      expect(JSON.stringify(llm.requests[1])).toContain('finished');
      const seqs = seenOnTwo.map((event) => event.seq);
      expect(new Set(seqs).size).toBe(seqs.length);
    });

    it('stops the turn of a server cut off from the database, and refuses its late writes: one server runs the session', async () => {
      const { llm, databaseUrl, config } = await setUp([
        { text: ['partial ', 'never sent'], stallAfterChunks: 2 },
        { text: 'answered after the partition' },
        { text: 'and the cut-off server works again' },
      ]);
      // The first server reaches the database through a link the test can partition.
      const database = new URL(databaseUrl);
      const link = await startTcpBalancer({ targetPorts: [Number(database.port)] });
      scope.cleanups.push(() => link.close());
      const throughLink = new URL(databaseUrl);
      throughLink.hostname = '127.0.0.1';
      throughLink.port = String(link.port);
      const one = await startInstance({ databaseUrl: throughLink.toString(), config });
      const two = await startInstance({ databaseUrl, config });
      const workerLink = await balance([one.url, two.url], [0]);
      const workdir = await scope.tempDir();
      const worker = await createWorker({
        serverUrl: workerLink.url,
        token: WORKER_TOKEN,
        workdir,
        reconnect: { initialMs: 100, maxMs: 500 },
      });
      scope.cleanups.push(() => worker.close());
      await worker.registered;
      const [onOne, onTwo] = [await connect(one.url), await connect(two.url)];
      await waitUntil(
        async () => (await onTwo.rpc.workers.list.query()).some((listed) => listed.workerId === worker.workerId),
        { what: 'the worker known to the second server' },
      );
      const session = await onTwo.rpc.sessions.create.mutate({ workerId: worker.workerId });
      const seenOnTwo = follow(onTwo, session.sessionId);
      await onTwo.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'first' });
      await waitUntil(() => seenOnTwo.some((event) => event.type === 'message.delta'), { what: 'the first chunk' });

      // The first server loses the database for longer than a lease lasts; the worker's balancer
      // sends it to the second.
      link.partition();
      workerLink.moveTo([1]);
      await waitUntil(async () => (await fetch(`${one.url.replace('ws://', 'http://')}/readyz`)).status === 503, {
        what: 'the cut-off server not ready',
      });
      await waitUntil(() => seenOnTwo.some((event) => event.type === 'turn.ended' && event.reason === 'completed'), {
        what: 'the turn run again on the second server',
        timeoutMs: 120_000,
      });

      // The partition heals: what the first server sent meanwhile arrives now, and is refused.
      link.heal();
      await waitUntil(async () => (await fetch(`${one.url.replace('ws://', 'http://')}/readyz`)).status === 200, {
        what: 'the first server ready again',
      });
      await onOne.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'second' });
      await waitUntil(
        () => seenOnTwo.filter((event) => event.type === 'turn.ended' && event.reason === 'completed').length === 2,
        {
          what: 'the second prompt answered',
        },
      );
      const { messages } = await onTwo.rpc.sessions.get.query({ sessionId: session.sessionId });
      expect(messages.map((message) => [message.role, 'text' in message ? message.text : ''])).toEqual([
        ['user', 'first'],
        ['assistant', 'answered after the partition'],
        ['user', 'second'],
        ['assistant', 'and the cut-off server works again'],
      ]);
      expect(llm.requests).toHaveLength(3);
      // Nothing the cut-off server sent for its turn lands after the turn run again: its late end
      // is refused with its writes.
      const [cutOffTurn, takenOver] = seenOnTwo.filter((event) => event.type === 'turn.started');
      const lastOfCutOff = Math.max(
        ...seenOnTwo
          .filter((event) => 'turnId' in event && event.turnId === cutOffTurn?.turnId)
          .map((event) => event.seq),
      );
      expect(lastOfCutOff).toBeLessThan(takenOver?.seq ?? 0);
      expect(
        seenOnTwo.filter((event) => event.type === 'turn.ended').map((event) => 'reason' in event && event.reason),
      ).toEqual(['completed', 'completed']);
    });

    it.skipIf(noFaketime !== undefined)(
      `keeps one server per session when the servers' clocks are an hour apart, both ways${noFaketime === undefined ? '' : ` (skipped: ${noFaketime})`}`,
      async () => {
        // The turn outlasts a lease (10 s): the lease is renewed by a server whose clock is an hour
        // behind, and watched by one whose clock is an hour ahead. Leases on either clock would expire
        // at once for the second, which would take the session and run the queued prompt beside the turn.
        const { llm, databaseUrl, config } = await setUp([
          { text: Array.from({ length: 14 }, (_, index) => `${index} `), chunkDelayMs: 1_000 },
          { text: 'second answer' },
        ]);
        const one = await startInstance({ databaseUrl, config, env: clockOff('-1h') });
        const two = await startInstance({ databaseUrl, config, env: clockOff('+1h') });
        const workdir = await scope.tempDir();
        const worker = await createWorker({ serverUrl: one.url, token: WORKER_TOKEN, workdir });
        scope.cleanups.push(() => worker.close());
        await worker.registered;
        const onTwo = await connect(two.url);
        await waitUntil(
          async () => (await onTwo.rpc.workers.list.query()).some((listed) => listed.workerId === worker.workerId),
          { what: 'the worker known to the second server' },
        );
        const session = await onTwo.rpc.sessions.create.mutate({ workerId: worker.workerId });
        const seen = follow(onTwo, session.sessionId);
        await onTwo.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'first' });
        await waitUntil(() => seen.some((event) => event.type === 'message.delta'), { what: 'the first chunk' });
        expect(await onTwo.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'second' })).toMatchObject({
          queued: true,
        });
        await waitUntil(() => seen.filter((event) => event.type === 'turn.ended').length === 2, {
          what: 'both turns ended',
          timeoutMs: 120_000,
        });
        expect(
          seen.filter((event) => event.type === 'turn.ended').map((event) => 'reason' in event && event.reason),
        ).toEqual(['completed', 'completed']);
        const { messages } = await onTwo.rpc.sessions.get.query({ sessionId: session.sessionId });
        expect(messages.map((message) => [message.role, 'text' in message ? message.text : ''])).toEqual([
          ['user', 'first'],
          ['assistant', Array.from({ length: 14 }, (_, index) => `${index} `).join('')],
          ['user', 'second'],
          ['assistant', 'second answer'],
        ]);
        expect(llm.requests).toHaveLength(2);
      },
    );

    it("answers an approval through a notification's link opened on another server", async () => {
      const { llm, databaseUrl, config } = await setUp([
        { toolCalls: [{ id: 'call_1', name: 'shell_exec', arguments: { command: 'echo ran >> ran.txt' } }] },
        { text: 'done' },
      ]);
      // A webhook target that records what it is sent.
      const received: string[] = [];
      const receiver = createHttpServer((request, response) => {
        let body = '';
        request.on('data', (chunk: Buffer) => {
          body += chunk.toString();
        });
        request.on('end', () => {
          received.push(body);
          response.end('{}');
        });
      });
      await new Promise<void>((resolveListen) => receiver.listen(0, '127.0.0.1', resolveListen));
      scope.cleanups.push(async () => {
        receiver.closeAllConnections();
        await new Promise((resolveClose) => receiver.close(resolveClose));
      });
      const settings = JSON.parse(await readFile(config, 'utf8')) as Record<string, unknown>;
      const port = (receiver.address() as AddressInfo).port;
      settings.notify = { targets: [{ type: 'webhook', url: `http://127.0.0.1:${port}/hook` }] };
      await writeFile(config, JSON.stringify(settings));
      const { servers, clients, worker, workdir } = await startCluster(2, { databaseUrl, config });
      const two = servers[1] as (typeof servers)[number];
      const [, onTwo] = clients as [MolfClient, MolfClient];
      const session = await onTwo.rpc.sessions.create.mutate({ workerId: worker.workerId });
      const seenOnTwo = follow(onTwo, session.sessionId);
      await onTwo.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'run it' });
      await waitUntil(() => received.length > 0, { what: 'the notification of the first server' });
      const { links } = JSON.parse(received[0] as string) as { links: { approve: string } };
      // The link names the first server; the second answers it just as well.
      const onSecond = new URL(links.approve);
      onSecond.port = new URL(two.url).port;
      const answered = await fetch(onSecond, { method: 'POST' });
      expect(answered.status).toBe(200);
      await waitUntil(() => seenOnTwo.some((event) => event.type === 'turn.ended'), { what: 'the turn ended' });
      expect(seenOnTwo.find((event) => event.type === 'approval.resolved')).toMatchObject({
        outcome: 'approved',
        by: expect.stringMatching(/^link:/),
      });
      expect(await readFile(join(workdir, 'ran.txt'), 'utf8')).toBe('ran\n');
      expect(llm.requests).toHaveLength(2);
      // Used once: the same link again is gone, wherever it is opened.
      expect((await fetch(links.approve, { method: 'POST' })).status).toBe(410);
    });

    it('makes tokens and pairing codes in the database (molf token/pair --database): every server takes them at once', async () => {
      const { databaseUrl, config } = await setUp([]);
      const { servers } = await startCluster(2, { databaseUrl, config });
      const [one, two] = servers as [(typeof servers)[number], (typeof servers)[number]];
      const molf = (args: string[]) =>
        spawnMolf(args, { env: { MOLF_DATABASE_URL: databaseUrl, MOLF_LOG_FILE: 'none' } });

      const made = await molf(['token', 'create', '--role', 'operator', '--name', 'pager']);
      expect(made.exitCode).toBe(0);
      const token = /molf_c_\S+/.exec(made.stdout)?.[0] ?? '';
      expect(token).not.toBe('');
      // No restart: both servers accept the new token.
      for (const server of [one, two]) {
        const client = createMolfClient({ url: server.url, token });
        scope.cleanups.push(() => client.close());
        await client.ready({ timeoutMs: 120_000 });
      }
      const listed = await molf(['token', 'list', '--json']);
      const credentials = JSON.parse(listed.stdout) as Array<{ id: string; name: string }>;
      const pager = credentials.find((credential) => credential.name === 'pager');
      expect(pager).toBeDefined();

      const paired = await molf(['pair', '--role', 'worker', '--name', 'build-box']);
      expect(paired.exitCode).toBe(0);
      const code = /pairing code [^:]*: ([0-9A-Z]{4}-[0-9A-Z]{4})/.exec(paired.stdout)?.[1] ?? '';
      // Made against the database, redeemed on the second server.
      expect(await redeemPairingCode({ url: two.url, code, kind: 'worker', name: 'x' })).toMatchObject({
        role: 'worker',
        name: 'build-box',
      });

      // Made with the flag, the code's cancel command names the database too, and works as printed.
      const withFlag = await spawnMolf(['pair', '--role', 'worker', '--database', databaseUrl], {
        env: { MOLF_LOG_FILE: 'none' },
      });
      const codeId = /cancel it with: molf pair cancel (\S+) --database URL/.exec(withFlag.stdout)?.[1];
      expect(codeId).toBeDefined();
      const cancelled = await spawnMolf(['pair', 'cancel', codeId ?? '', '--database', databaseUrl], {
        env: { MOLF_LOG_FILE: 'none' },
      });
      expect(cancelled.exitCode).toBe(0);

      // Revoked from the database: refused by both.
      expect((await molf(['token', 'revoke', pager?.id ?? '', '--yes'])).exitCode).toBe(0);
      for (const server of [one, two]) {
        await waitUntil(
          async () => {
            const client = createMolfClient({ url: server.url, token, retryDelayMs: () => 100 });
            try {
              await client.ready({ timeoutMs: 2_000 });
              return false;
            } catch {
              return true;
            } finally {
              await client.close();
            }
          },
          { what: 'the revoked token refused' },
        );
      }
    });

    it('lets a client of a third server answer an approval of a turn run on the first, the first answer winning', async () => {
      const { llm, databaseUrl, config } = await setUp([
        { toolCalls: [{ id: 'call_1', name: 'shell_exec', arguments: { command: 'echo ran >> ran.txt' } }] },
        { text: 'done' },
      ]);
      const { clients, worker, workdir } = await startCluster(3, { databaseUrl, config });
      const [, onTwo, onThree] = clients as [MolfClient, MolfClient, MolfClient];
      // The third server lists the worker connected to the first as online, and the second makes its session.
      await waitUntil(
        async () =>
          (await onThree.rpc.workers.list.query()).some(
            (listed) => listed.workerId === worker.workerId && listed.state === 'online',
          ),
        { what: 'the worker listed online by the third server' },
      );
      const session = await onTwo.rpc.sessions.create.mutate({ workerId: worker.workerId });
      const seenOnTwo = follow(onTwo, session.sessionId);
      // A live approvals feed on the third server, open before anything is asked.
      const feedOnThree: ApprovalEvent[] = [];
      const feed = onThree.rpc.approvals.events.subscribe({}, { onData: (event) => feedOnThree.push(event) });
      scope.cleanups.push(async () => feed.unsubscribe());
      await onTwo.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'run it' });
      await waitUntil(() => feedOnThree.some((event) => event.type === 'approval.requested'), {
        what: 'the approval asked on the first server, live on the third',
      });
      let approvalId = '';
      await waitUntil(
        async () => {
          const waiting = await onThree.rpc.approvals.list.query({ sessionId: session.sessionId });
          approvalId = waiting[0]?.approvalId ?? '';
          return approvalId !== '';
        },
        { what: 'the approval, listed on the third server' },
      );
      // Two people answer at once, on two other servers: one answer applies.
      const answers = await Promise.all([
        onThree.rpc.approvals.approve.mutate({ sessionId: session.sessionId, approvalId, scope: 'once' }),
        onTwo.rpc.approvals.deny.mutate({ sessionId: session.sessionId, approvalId, feedback: 'no' }),
      ]);
      expect(answers.filter((answer) => answer.applied)).toHaveLength(1);
      await waitUntil(() => seenOnTwo.some((event) => event.type === 'turn.ended'), { what: 'the turn ended' });
      const resolved = seenOnTwo.filter((event) => event.type === 'approval.resolved');
      expect(resolved).toHaveLength(1);
      await waitUntil(() => feedOnThree.some((event) => event.type === 'approval.resolved'), {
        what: 'the approval settled, live on the third server',
      });
      expect(feedOnThree.map((event) => event.type)).toEqual(['approval.requested', 'approval.resolved']);
      expect(feedOnThree[0]).toMatchObject({ approval: { approvalId } });
      const approved = answers[0]?.applied === true;
      expect(resolved[0]).toMatchObject({ outcome: approved ? 'approved' : 'denied' });
      const ran = await readFile(join(workdir, 'ran.txt'), 'utf8').catch(() => '');
      expect(ran).toBe(approved ? 'ran\n' : '');
      expect(await onThree.rpc.approvals.list.query({ sessionId: session.sessionId })).toEqual([]);
      expect(llm.requests).toHaveLength(2);
    });

    it('goes on after the database restarts mid-turn: the answer is stored, every event reaches the client once', async () => {
      // A cluster of its own, to restart.
      const cluster = await startPostgresCluster();
      scope.cleanups.push(() => cluster.close());
      const databaseUrl = await cluster.createDatabase('molf');
      const llm = await startFakeLlm({
        turns: [{ text: ['one ', 'two ', 'three ', 'four ', 'five ', 'six'], chunkDelayMs: 500 }],
      });
      scope.cleanups.push(() => llm.close());
      const config = join(await scope.tempDir(), 'molf.jsonc');
      await writeFile(config, JSON.stringify({ model: 'fake/m', providers: { fake: { baseURL: llm.baseURL } } }));
      const { servers, clients, worker } = await startCluster(2, { databaseUrl, config });
      const two = servers[1] as (typeof servers)[number];
      const [onOne, onTwo] = clients as [MolfClient, MolfClient];
      const session = await onOne.rpc.sessions.create.mutate({ workerId: worker.workerId });
      const seenOnTwo = follow(onTwo, session.sessionId);
      await onOne.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'count' });
      await waitUntil(() => seenOnTwo.some((event) => event.type === 'message.delta'), { what: 'the first chunk' });

      await cluster.stop();
      // Meanwhile the servers say so, and refuse work with a clear error.
      await waitUntil(async () => (await fetch(`${two.url.replace('ws://', 'http://')}/readyz`)).status === 503, {
        what: 'the second server not ready',
      });
      await expect(onTwo.rpc.sessions.list.query({})).rejects.toMatchObject({
        message: expect.stringContaining('the database cannot be reached'),
      });
      await cluster.start();

      await waitUntil(() => seenOnTwo.some((event) => event.type === 'turn.ended'), { what: 'the turn ended' });
      const { messages } = await onTwo.rpc.sessions.get.query({ sessionId: session.sessionId });
      expect(messages.map((message) => [message.role, 'text' in message ? message.text : ''])).toEqual([
        ['user', 'count'],
        ['assistant', 'one two three four five six'],
      ]);
      const seqs = seenOnTwo.map((event) => event.seq);
      expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, index) => index + 1));
      const text = seenOnTwo.flatMap((event) => (event.type === 'message.delta' ? [event.text] : [])).join('');
      expect(text).toBe('one two three four five six');
      expect(llm.requests).toHaveLength(1);
    });

    it.each([
      { when: 'as it stores the answer', turn: { text: ['one ', 'two ', 'three ', 'four '], chunkDelayMs: 500 } },
      {
        when: 'while the model still answers',
        turn: { text: Array.from({ length: 30 }, (_, index) => `${index} `), chunkDelayMs: 1_000 },
      },
    ])(
      'stops the turn of servers that lose the database for longer than a lease ($when), says why, and answers the prompt once it is back',
      async ({ turn }) => {
        const cluster = await startPostgresCluster();
        scope.cleanups.push(() => cluster.close());
        const databaseUrl = await cluster.createDatabase('molf');
        const llm = await startFakeLlm({ turns: [turn, { text: 'answered after the outage' }] });
        scope.cleanups.push(() => llm.close());
        const config = join(await scope.tempDir(), 'molf.jsonc');
        await writeFile(config, JSON.stringify({ model: 'fake/m', providers: { fake: { baseURL: llm.baseURL } } }));
        const { servers, clients, worker } = await startCluster(2, { databaseUrl, config });
        const [onOne, onTwo] = clients as [MolfClient, MolfClient];
        const session = await onOne.rpc.sessions.create.mutate({ workerId: worker.workerId });
        const seenOnTwo = follow(onTwo, session.sessionId);
        // `molf run` on the second server sends the prompt, and follows its turn to the end.
        const run = spawnMolf(
          ['run', 'count', '--session', session.sessionId, '--server', (servers[1] as { url: string }).url],
          { env: { MOLF_CLIENT_TOKEN: CLIENT_TOKEN, MOLF_LOG_FILE: 'none', MOLF_CLIENT_DIR: await scope.tempDir() } },
        );
        await waitUntil(() => seenOnTwo.some((event) => event.type === 'message.delta'), { what: 'the first chunk' });
        const firstTurn = (seenOnTwo.find((event) => event.type === 'turn.started') as { turnId: string }).turnId;

        // Down for longer than a lease lasts (10 s): the turn's server lets the session go.
        await cluster.stop();
        await waitUntil(
          async () => {
            const health = await fetch(`${(servers[0] as { url: string }).url.replace('ws://', 'http://')}/readyz`);
            return health.status === 503;
          },
          { what: 'the first server not ready' },
        );
        await new Promise((resolveLater) => setTimeout(resolveLater, 12_000));
        await cluster.start();

        await waitUntil(() => seenOnTwo.some((event) => event.type === 'turn.ended'), {
          what: 'the prompt answered',
          timeoutMs: 120_000,
        });
        const { messages } = await onTwo.rpc.sessions.get.query({ sessionId: session.sessionId });
        expect(messages.map((message) => [message.role, 'text' in message ? message.text : ''])).toEqual([
          ['user', 'count'],
          ['assistant', 'answered after the outage'],
        ]);
        // The cut-off turn says why, and does not end as if a person had aborted it; the prompt's
        // turn starts again after it.
        const cutOff = seenOnTwo.filter((event) => 'turnId' in event && event.turnId === firstTurn);
        expect(cutOff.at(-1)).toMatchObject({ type: 'error', code: 'database_unavailable' });
        expect(cutOff.some((event) => event.type === 'turn.ended')).toBe(false);
        const turnStarts = seenOnTwo.filter((event) => event.type === 'turn.started');
        expect(turnStarts).toHaveLength(2);
        expect(Math.max(...cutOff.map((event) => event.seq))).toBeLessThan(turnStarts[1]?.seq ?? 0);
        expect(
          seenOnTwo.filter((event) => event.type === 'turn.ended').map((event) => 'reason' in event && event.reason),
        ).toEqual(['completed']);
        const seqs = seenOnTwo.map((event) => event.seq);
        expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, index) => index + 1));
        expect(llm.requests).toHaveLength(2);
        // The run says why the turn stopped, follows it as it runs again, and ends as it does.
        const ran = await run;
        expect(ran.exitCode).toBe(0);
        expect(ran.stderr).toContain('(database_unavailable)');
        expect(ran.stderr).toContain('[the turn runs again]');
        expect(ran.stdout.trimEnd()).toMatch(/\n\nanswered after the outage$/);
      },
    );

    it('aborts a turn running on one server when a client of another asks', async () => {
      const { llm, databaseUrl, config } = await setUp([
        { text: ['never ', 'finished'], stallAfterChunks: 2 },
        { text: 'the next prompt is answered' },
      ]);
      const { clients, worker } = await startCluster(2, { databaseUrl, config });
      const [onOne, onTwo] = clients as [MolfClient, MolfClient];
      const session = await onOne.rpc.sessions.create.mutate({ workerId: worker.workerId });
      const seenOnTwo = follow(onTwo, session.sessionId);
      await onOne.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'stall' });
      await waitUntil(() => seenOnTwo.some((event) => event.type === 'message.delta'), { what: 'the first chunk' });
      await onTwo.rpc.sessions.abort.mutate({ sessionId: session.sessionId });
      await waitUntil(() => seenOnTwo.some((event) => event.type === 'turn.ended'), { what: 'the turn ended' });
      expect(seenOnTwo.find((event) => event.type === 'turn.ended')).toMatchObject({ reason: 'aborted' });
      // The session goes on: the next prompt, sent to the second server, is answered.
      await onTwo.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'again' });
      await waitUntil(() => seenOnTwo.filter((event) => event.type === 'turn.ended').length === 2, {
        what: 'the second turn ended',
      });
      const { messages } = await onTwo.rpc.sessions.get.query({ sessionId: session.sessionId });
      expect(messages.at(-1)).toMatchObject({ role: 'assistant', text: 'the next prompt is answered' });
      expect(llm.requests).toHaveLength(2);
    });
  },
);

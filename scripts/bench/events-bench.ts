/**
 * Events benchmark: many sessions streaming at once through one server.
 *
 * Three processes, so the server's CPU is its own: the fake LLM (a child), the server (a child), and
 * this process with the worker and the clients. Each of N sessions (1,000; 100 with --quick) gets a
 * prompt; the fake LLM streams each answer as CHUNKS text chunks, one every INTERVAL ms, every chunk
 * stamped with the wall-clock time it was sent. Measured:
 *
 *   latency  — from a chunk leaving the fake LLM to its text reaching a client subscribed to the
 *              session's events (p50, p99 over every chunk). Goal: p99 < 100 ms at 1,000 sessions.
 *   CPU      — the server process's CPU (user + system) from the first prompt to the last turn.ended,
 *              per model chunk and per event delivered (deltas of one tick are one event). Goal:
 *              <= 0.1 ms per event.
 *
 * Usage: node scripts/bench/events-bench.ts [--quick] [--json] [--sessions N] [--chunks N] [--interval MS]
 */
import { type ChildProcess, fork } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createMolfClient, type MolfClient } from '@molf/client/node';
import type { SessionEvent } from '@molf/protocol';
import { createServer } from '@molf/server';
import { startFakeLlm } from '@molf/testkit';
import { createWorker } from '@molf/worker';
import { BENCH_OPTIONS } from './bench-flags.ts';
import { percentile } from './bench-stats.ts';

const { values: flags } = parseArgs({
  options: {
    ...BENCH_OPTIONS,
    role: { type: 'string' },
    sessions: { type: 'string' },
    chunks: { type: 'string' },
    interval: { type: 'string' },
  },
  strict: true,
});
const SESSIONS = Number(flags.sessions ?? (flags.quick ? 100 : 1_000));
const CHUNKS = Number(flags.chunks ?? 20);
const INTERVAL_MS = Number(flags.interval ?? 100);
const CLIENTS = Math.max(1, Math.min(10, Math.ceil(SESSIONS / 100)));
const TOKENS = { client: 'molf_c_bench-client-token-0123456789', worker: 'molf_w_bench-worker-token-0123456789' };
const progress = (message: string) => process.stderr.write(`${message}\n`);
const wallClock = () => performance.timeOrigin + performance.now();

type ChildMessage = { type: 'ready'; url: string } | { type: 'cpu'; microseconds: number };

/** The fake LLM's process: answers every request with a stamped, paced stream. */
async function runLlm(): Promise<void> {
  const llm = await startFakeLlm({
    turns: Array.from({ length: SESSIONS }, () => ({
      text: Array.from({ length: CHUNKS }, (_, index) => `w${index} `),
      chunkDelayMs: INTERVAL_MS,
      stampChunks: true,
    })),
  });
  process.send?.({ type: 'ready', url: llm.baseURL } satisfies ChildMessage);
  process.on('disconnect', () => void llm.close().finally(() => process.exit(0)));
}

/** The server's process: reports its own CPU when asked. */
async function runServer(llmUrl: string, dataDir: string): Promise<void> {
  const server = await createServer({
    port: 0,
    dataDir,
    tokens: TOKENS,
    models: { defaultModel: 'fake/m', custom: { fake: { baseURL: llmUrl } } },
  });
  process.send?.({ type: 'ready', url: server.url } satisfies ChildMessage);
  process.on('message', (message: { type: string }) => {
    if (message.type !== 'cpu') return;
    const usage = process.cpuUsage();
    process.send?.({ type: 'cpu', microseconds: usage.user + usage.system } satisfies ChildMessage);
  });
  process.on('disconnect', () => void server.close().finally(() => process.exit(0)));
}

function startChild(args: string[]): { child: ChildProcess; next: () => Promise<ChildMessage> } {
  const child = fork(fileURLToPath(import.meta.url), args, {
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    execArgv:
      process.env.MOLF_BENCH_PROFILE === undefined
        ? []
        : ['--cpu-prof', '--cpu-prof-dir', process.env.MOLF_BENCH_PROFILE],
  });
  const inbox: ChildMessage[] = [];
  let waiter: ((message: ChildMessage) => void) | undefined;
  child.on('message', (message: ChildMessage) => {
    if (waiter === undefined) inbox.push(message);
    else {
      const resolve = waiter;
      waiter = undefined;
      resolve(message);
    }
  });
  const next = () => {
    const queued = inbox.shift();
    if (queued !== undefined) return Promise.resolve(queued);
    return new Promise<ChildMessage>((resolve, reject) => {
      waiter = resolve;
      child.once('exit', (code) => reject(new Error(`a benchmark child exited (${code})`)));
    });
  };
  return { child, next };
}

const STAMP = /⟨(\d+\.\d+)⟩/g;

async function measure(root: string) {
  const shape = ['--sessions', String(SESSIONS), '--chunks', String(CHUNKS), '--interval', String(INTERVAL_MS)];
  const llm = startChild(['--role', 'llm', ...shape]);
  const llmReady = await llm.next();
  if (llmReady.type !== 'ready') throw new Error('the fake LLM did not start');
  const server = startChild(['--role', `server:${llmReady.url}:${join(root, 'server')}`, ...shape]);
  const serverReady = await server.next();
  if (serverReady.type !== 'ready') throw new Error('the server did not start');
  const serverCpu = async () => {
    server.child.send({ type: 'cpu' });
    const answer = await server.next();
    if (answer.type !== 'cpu') throw new Error('the server did not report its CPU');
    return answer.microseconds;
  };

  const workdir = join(root, 'workdir');
  await mkdir(workdir, { recursive: true });
  const worker = await createWorker({ serverUrl: serverReady.url, token: TOKENS.worker, workdir });
  const clients: MolfClient[] = [];
  try {
    await worker.registered;
    for (let index = 0; index < CLIENTS; index += 1) {
      const client = createMolfClient({ url: serverReady.url, token: TOKENS.client });
      await client.ready();
      clients.push(client);
    }
    progress(`creating ${SESSIONS} sessions…`);
    const sessions: Array<{ sessionId: string; client: MolfClient }> = [];
    for (let index = 0; index < SESSIONS; index += 1) {
      const client = clients[index % clients.length] as MolfClient;
      const { sessionId } = await client.rpc.sessions.create.mutate({ workerId: worker.workerId });
      sessions.push({ sessionId, client });
    }
    const latencies: number[] = [];
    let events = 0;
    let ended = 0;
    let allEnded: () => void = () => {};
    const done = new Promise<void>((resolve) => {
      allEnded = resolve;
    });
    const subscriptions = sessions.map(({ sessionId, client }) =>
      client.rpc.sessions.events.subscribe(
        { sessionId, fromNow: true },
        {
          onData: ({ data }: { data: SessionEvent }) => {
            events += 1;
            if (data.type === 'message.delta') {
              const now = wallClock();
              for (const match of data.text.matchAll(STAMP)) latencies.push(now - Number(match[1]));
            } else if (data.type === 'turn.ended') {
              ended += 1;
              if (ended === SESSIONS) allEnded();
            }
          },
        },
      ),
    );
    // Subscriptions are live once the server has them; a round trip on each client makes sure.
    await Promise.all(clients.map((client) => client.rpc.auth.whoami.query()));
    progress(`${SESSIONS} sessions streaming ${CHUNKS} chunks every ${INTERVAL_MS} ms…`);
    const cpuBefore = await serverCpu();
    const started = performance.now();
    await Promise.all(
      sessions.map(({ sessionId, client }) => client.rpc.sessions.prompt.mutate({ sessionId, text: 'go' })),
    );
    await done;
    const seconds = (performance.now() - started) / 1_000;
    const cpuMs = ((await serverCpu()) - cpuBefore) / 1_000;
    for (const subscription of subscriptions) subscription.unsubscribe();
    const chunks = latencies.length;
    return {
      sessions: SESSIONS,
      chunksPerAnswer: CHUNKS,
      intervalMs: INTERVAL_MS,
      seconds: Math.round(seconds * 100) / 100,
      chunks,
      events,
      latencyP50Ms: percentile(latencies, 0.5),
      latencyP99Ms: percentile(latencies, 0.99),
      serverCpuMs: Math.round(cpuMs),
      serverCpuPerChunkMs: cpuMs / chunks,
      serverCpuPerEventMs: cpuMs / events,
    };
  } finally {
    for (const client of clients) await client.close();
    await worker.close();
    const exited = (child: ChildProcess) =>
      child.exitCode !== null ? Promise.resolve() : new Promise((resolve) => child.once('exit', resolve));
    server.child.disconnect();
    llm.child.disconnect();
    await Promise.all([exited(server.child), exited(llm.child)]);
  }
}

async function main(): Promise<void> {
  if (flags.role === 'llm') return runLlm();
  if (flags.role?.startsWith('server:') === true) {
    const [, ...rest] = flags.role.split(':');
    const dataDir = rest.pop() as string;
    return runServer(rest.join(':'), dataDir);
  }
  const root = await mkdtemp(join(tmpdir(), 'molf-events-bench-'));
  try {
    const result = await measure(root);
    if (flags.json) {
      process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
      return;
    }
    const ms = (value: number) => `${value.toFixed(3)} ms`;
    process.stdout.write(
      [
        '',
        `Events benchmark — Node ${process.version}`,
        '',
        `${result.sessions} sessions streaming at once, ${result.chunksPerAnswer} chunks each every ${result.intervalMs} ms: ${result.chunks} chunks as ${result.events} events in ${result.seconds} s`,
        `latency chunk → client   p50 ${ms(result.latencyP50Ms)}  p99 ${ms(result.latencyP99Ms)}  (goal p99 < 100 ms)  ${result.latencyP99Ms < 100 ? 'PASS' : 'FAIL'}`,
        `server CPU               ${result.serverCpuMs} ms: ${ms(result.serverCpuPerChunkMs)} per chunk, ${ms(result.serverCpuPerEventMs)} per event (goal ≤ 0.1 ms)  ${result.serverCpuPerEventMs <= 0.1 ? 'PASS' : 'FAIL'}`,
        '',
      ].join('\n'),
    );
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`events benchmark FAILED: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});

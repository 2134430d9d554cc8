/**
 * Sessions benchmark, three parts measured in one run:
 *
 *   append    — storing one message (appended and synced) in a session of 10 messages and in one of
 *               10,000 (2,000 with --quick); the two medians must be about equal (O(1) per message).
 *               Baseline: the same line appended and synced on an open file with no store around it.
 *   list      — opening a store of 10,000 sessions (1,000 with --quick; a third of them subagents'
 *               sessions) and listing 50 of them; top-level ones matching a name; and 50 right after a
 *               message was appended (the changed session moves, nothing is sorted again). No message
 *               file is read.
 *   streaming — N sessions (20; 5 with --quick) answering at once through the fake LLM, each a
 *               200-chunk answer, received by one client over WebSocket: events per second, and the
 *               server's memory per session.
 *   turn      — the CPU of one turn (prompt to turn.ended, a short answer through the fake LLM; server,
 *               worker, client and fake LLM all in this process) in a session of 10 messages and in one of
 *               10,000 (2,000 with --quick) whose older messages are summarised, so the request the
 *               provider receives is the same size in both: what differs is the turn's own cost. Goal:
 *               ≤ 1.3× (O(1) turns).
 *
 * Usage: node scripts/bench/sessions-bench.ts [--quick] [--json]
 */
import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, open, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createMolfClient } from '@molf/client/node';
import { createSilentLogger } from '@molf/logging';
import type { SessionMessage, WorkerId } from '@molf/protocol';
import { createServer, openFileSessionStore } from '@molf/server';
import { type FakeLlm, startFakeLlm } from '@molf/testkit';
import { createWorker } from '@molf/worker';
import { BENCH_OPTIONS } from './bench-flags.ts';
import { percentile } from './bench-stats.ts';

// --rounds is accepted, as by every benchmark, and unused: each part here has its own fixed count.
const { values: flags } = parseArgs({ options: BENCH_OPTIONS, strict: true });
const LARGE_SESSION = flags.quick ? 2_000 : 10_000;
const SESSION_COUNT = flags.quick ? 1_000 : 10_000;
const STREAMING_SESSIONS = flags.quick ? 5 : 20;
const SAMPLES = flags.quick ? 100 : 300;
const progress = (message: string) => process.stderr.write(`${message}\n`);
// Memory figures need a collection before each reading.
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

function message(index: number): SessionMessage {
  return {
    id: randomUUID(),
    at: new Date().toISOString(),
    role: 'assistant',
    text: `answer ${index}: ${'lorem ipsum dolor sit amet '.repeat(8)}`,
    toolCalls: [],
    model: 'fake/m',
  };
}

async function timeAppends(append: () => Promise<void>): Promise<number[]> {
  const times: number[] = [];
  for (let sample = 0; sample < SAMPLES; sample += 1) {
    const started = performance.now();
    await append();
    times.push(performance.now() - started);
  }
  return times;
}

async function appendBench(root: string) {
  const store = await openFileSessionStore({ dataDir: root, logger: createSilentLogger() });
  const small = await store.create({ workerId: randomUUID() as WorkerId });
  const large = await store.create({ workerId: randomUUID() as WorkerId });
  for (let index = 0; index < 10; index += 1) await store.append(small.sessionId, message(index));
  progress(`filling a session with ${LARGE_SESSION} messages…`);
  for (let index = 0; index < LARGE_SESSION; index += 1) await store.append(large.sessionId, message(index));

  const raw = await open(join(root, 'raw.jsonl'), 'a');
  const line = `${JSON.stringify(message(0))}\n`;
  const baseline = await timeAppends(async () => {
    await raw.appendFile(line);
    await raw.datasync();
  });
  await raw.close();
  const atSmall = await timeAppends(() => store.append(small.sessionId, message(1)));
  const atLarge = await timeAppends(() => store.append(large.sessionId, message(2)));
  await store.close();
  return {
    baselineMedianMs: percentile(baseline, 0.5),
    at10MedianMs: percentile(atSmall, 0.5),
    at10P99Ms: percentile(atSmall, 0.99),
    atLargeMedianMs: percentile(atLarge, 0.5),
    atLargeP99Ms: percentile(atLarge, 0.99),
    largeSize: LARGE_SESSION,
    flatRatio: percentile(atLarge, 0.5) / percentile(atSmall, 0.5),
  };
}

async function listBench(root: string) {
  progress(`writing ${SESSION_COUNT} sessions…`);
  const sessions = join(root, 'sessions');
  const ids = Array.from({ length: SESSION_COUNT }, () => randomUUID());
  for (const [index, sessionId] of ids.entries()) {
    await mkdir(join(sessions, sessionId), { recursive: true });
    const at = new Date(Date.now() - index * 1_000).toISOString();
    await writeFile(
      join(sessions, sessionId, 'meta.json'),
      JSON.stringify({
        sessionId,
        workerId: 'w',
        name: `session ${index}`,
        // Every third session is a subagent's, of the one after it.
        ...(index % 3 === 0
          ? { parent: { sessionId: ids[index + 1] ?? ids[0], toolCallId: 't', agent: 'explore' } }
          : {}),
        createdAt: at,
        updatedAt: at,
        messageCount: 40,
      }),
    );
    // A history the listing must never read.
    await writeFile(join(sessions, sessionId, 'messages.jsonl'), `${JSON.stringify(message(index))}\n`.repeat(40));
  }
  const openStarted = performance.now();
  const store = await openFileSessionStore({ dataDir: root, logger: createSilentLogger() });
  const openMs = performance.now() - openStarted;
  const times: number[] = [];
  for (let round = 0; round < 50; round += 1) {
    const started = performance.now();
    const page = await store.list({ limit: 50, offset: round * 50 });
    times.push(performance.now() - started);
    if (page.total !== SESSION_COUNT) throw new Error(`listed ${page.total} sessions`);
  }
  // Top-level sessions whose name has a "1" (about half of them), paged.
  const filtered: number[] = [];
  for (let round = 0; round < 50; round += 1) {
    const started = performance.now();
    const page = await store.list({ topLevel: true, name: '1', limit: 50, offset: round * 50 });
    filtered.push(performance.now() - started);
    if (page.sessions.some((session) => session.parent !== undefined)) throw new Error('listed a subagent session');
  }
  // The oldest session gets a message, then the first page is listed: the order moves one session.
  const afterAppend: number[] = [];
  for (let round = 0; round < 50; round += 1) {
    const sessionId = ids[SESSION_COUNT - 1 - round] as string;
    await store.append(sessionId, message(round));
    const started = performance.now();
    const page = await store.list({ limit: 50, offset: 0 });
    afterAppend.push(performance.now() - started);
    if (page.sessions[0]?.sessionId !== sessionId) throw new Error('the appended session is not listed first');
  }
  await store.close();
  return {
    sessions: SESSION_COUNT,
    openMs,
    listMedianMs: percentile(times, 0.5),
    listP99Ms: percentile(times, 0.99),
    topLevelSearchMedianMs: percentile(filtered, 0.5),
    topLevelSearchP99Ms: percentile(filtered, 0.99),
    afterAppendMedianMs: percentile(afterAppend, 0.5),
    afterAppendP99Ms: percentile(afterAppend, 0.99),
  };
}

/** A real server, a registered worker and a connected client, talking to `llm`; `close` ends all four. */
async function startStack(root: string, llm: FakeLlm) {
  const tokens = { client: 'molf_c_bench-client-token-0123456789', worker: 'molf_w_bench-worker-token-0123456789' };
  const server = await createServer({
    port: 0,
    dataDir: join(root, 'server'),
    tokens,
    models: { defaultModel: 'fake/m', custom: { fake: { baseURL: llm.baseURL } } },
  });
  const workdir = join(root, 'workdir');
  await mkdir(workdir, { recursive: true });
  const worker = await createWorker({ serverUrl: server.url, token: tokens.worker, workdir });
  await worker.registered;
  const client = createMolfClient({ url: server.url, token: tokens.client });
  await client.ready();
  return {
    server,
    worker,
    client,
    async close() {
      await client.close();
      await worker.close();
      await server.close();
      await llm.close();
    },
  };
}

async function streamingBench(root: string) {
  const chunks = Array.from({ length: 200 }, (_, index) => `token${index} `);
  const llm = await startFakeLlm({ turns: Array.from({ length: STREAMING_SESSIONS }, () => ({ text: chunks })) });
  const { worker, client, close } = await startStack(root, llm);
  try {
    const ids: string[] = [];
    for (let index = 0; index < STREAMING_SESSIONS; index += 1) {
      ids.push((await client.rpc.sessions.create.mutate({ workerId: worker.workerId })).sessionId);
    }
    collectGarbage();
    const rssBefore = process.memoryUsage().rss;
    const heapBefore = process.memoryUsage().heapUsed;
    let events = 0;
    let ended = 0;
    let peakRss = rssBefore;
    const done = new Promise<void>((resolve) => {
      for (const sessionId of ids) {
        client.rpc.sessions.events.subscribe(
          { sessionId },
          {
            onData: ({ data }) => {
              events += 1;
              if (data.type === 'turn.ended') {
                ended += 1;
                peakRss = Math.max(peakRss, process.memoryUsage().rss);
                if (ended === ids.length) resolve();
              }
            },
          },
        );
      }
    });
    const sampler = setInterval(() => {
      peakRss = Math.max(peakRss, process.memoryUsage().rss);
    }, 10);
    const started = performance.now();
    await Promise.all(ids.map((sessionId) => client.rpc.sessions.prompt.mutate({ sessionId, text: 'stream' })));
    await done;
    clearInterval(sampler);
    const seconds = (performance.now() - started) / 1_000;
    collectGarbage();
    const rssAfter = process.memoryUsage().rss;
    const heapAfter = process.memoryUsage().heapUsed;
    return {
      sessions: STREAMING_SESSIONS,
      chunksPerAnswer: chunks.length,
      events,
      eventsPerSecond: Math.round(events / seconds),
      seconds: Math.round(seconds * 100) / 100,
      peakRssPerSessionKiB: Math.round((peakRss - rssBefore) / 1024 / STREAMING_SESSIONS),
      retainedHeapPerSessionKiB: Math.round((heapAfter - heapBefore) / 1024 / STREAMING_SESSIONS),
      rssAfterMiB: Math.round(rssAfter / 1024 / 1024),
    };
  } finally {
    await close();
  }
}

/** A history of `count` alternating prompts and answers, then a summary covering them all. */
function summarisedHistory(count: number): SessionMessage[] {
  const history: SessionMessage[] = [];
  for (let index = 0; index < count - 1; index += 1) {
    history.push(
      index % 2 === 0
        ? {
            id: randomUUID(),
            at: new Date().toISOString(),
            role: 'user',
            text: `question ${index}: ${'why '.repeat(40)}`,
          }
        : message(index),
    );
  }
  const last = history.at(-1);
  history.push({
    id: randomUUID(),
    at: new Date().toISOString(),
    role: 'summary',
    text: `Goal: answer questions. Progress: ${count - 1} messages so far. ${'Details. '.repeat(20)}`,
    coversUntil: last?.id ?? '',
    model: 'fake/m',
  });
  return history;
}

async function turnBench(root: string) {
  const turns = flags.quick ? 10 : 30;
  const llm = await startFakeLlm({ turns: Array.from({ length: 3 * (turns + 1) }, () => ({ text: 'fine' })) });
  const { server, worker, client, close } = await startStack(root, llm);
  try {
    const cpuPerTurn = async (historyLength: number) => {
      const { sessionId } = await client.rpc.sessions.create.mutate({ workerId: worker.workerId });
      progress(`a session of ${historyLength} messages…`);
      for (const stored of summarisedHistory(historyLength)) await server.sessions.append(sessionId, stored);
      let ended = 0;
      let wake: (() => void) | undefined;
      const subscription = client.rpc.sessions.events.subscribe(
        { sessionId },
        {
          onData: ({ data }) => {
            if (data.type === 'turn.ended') {
              ended += 1;
              wake?.();
            }
          },
        },
      );
      const times: number[] = [];
      try {
        // The first turn warms up (a history read from its file once, code paths compiled).
        for (let turn = 0; turn <= turns; turn += 1) {
          const target = ended + 1;
          const until = new Promise<void>((resolve) => {
            wake = () => {
              if (ended >= target) resolve();
            };
          });
          const cpu = process.cpuUsage();
          await client.rpc.sessions.prompt.mutate({ sessionId, text: `prompt ${turn}` });
          await until;
          const used = process.cpuUsage(cpu);
          if (turn > 0) times.push((used.user + used.system) / 1_000);
        }
      } finally {
        subscription.unsubscribe();
      }
      const request = llm.requests.at(-1);
      return { medianMs: percentile(times, 0.5), requestMessages: request?.messages.length ?? 0 };
    };
    // A first session warms every code path up, so neither measured size pays for compilation.
    await cpuPerTurn(10);
    const small = await cpuPerTurn(10);
    const large = await cpuPerTurn(LARGE_SESSION);
    return {
      turns,
      at10MedianMs: small.medianMs,
      atLargeMedianMs: large.medianMs,
      largeSize: LARGE_SESSION,
      requestMessages: [small.requestMessages, large.requestMessages],
      flatRatio: large.medianMs / small.medianMs,
    };
  } finally {
    await close();
  }
}

async function main(): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), 'molf-sessions-bench-'));
  try {
    const append = await appendBench(join(root, 'append'));
    const list = await listBench(join(root, 'list'));
    const streaming = await streamingBench(join(root, 'streaming'));
    const turn = await turnBench(join(root, 'turn'));
    if (flags.json) {
      process.stdout.write(`${JSON.stringify({ append, list, streaming, turn }, null, 2)}\n`);
      return;
    }
    const ms = (value: number) => `${value.toFixed(3)} ms`;
    process.stdout.write(
      [
        '',
        `Sessions benchmark — Node ${process.version}`,
        '',
        `append one message   baseline (raw append + datasync) median ${ms(append.baselineMedianMs)}`,
        `                     at 10 messages      median ${ms(append.at10MedianMs)}  p99 ${ms(append.at10P99Ms)}`,
        `                     at ${append.largeSize} messages median ${ms(append.atLargeMedianMs)}  p99 ${ms(append.atLargeP99Ms)}`,
        `                     flat: ${append.flatRatio.toFixed(2)}× (target ≈ 1×, ≤ 1.5×)  ${append.flatRatio <= 1.5 ? 'PASS' : 'FAIL'}`,
        `list sessions        open a store of ${list.sessions}: ${list.openMs.toFixed(0)} ms; list 50: median ${ms(list.listMedianMs)}  p99 ${ms(list.listP99Ms)}`,
        `                     top-level + name search, 50: median ${ms(list.topLevelSearchMedianMs)}  p99 ${ms(list.topLevelSearchP99Ms)}; list 50 right after an append: median ${ms(list.afterAppendMedianMs)}  p99 ${ms(list.afterAppendP99Ms)}`,
        `streaming            ${streaming.sessions} sessions × ${streaming.chunksPerAnswer} chunks at once: ${streaming.events} events in ${streaming.seconds} s = ${streaming.eventsPerSecond} events/s`,
        `                     memory per session (server, worker, client and fake LLM share this process; RSS ${streaming.rssAfterMiB} MiB after): RSS peak +${streaming.peakRssPerSessionKiB} KiB while streaming, heap +${streaming.retainedHeapPerSessionKiB} KiB retained after (the kept events)`,
        `turn CPU             at 10 messages median ${ms(turn.at10MedianMs)}; at ${turn.largeSize} (older ones summarised) median ${ms(turn.atLargeMedianMs)}; requests carried ${turn.requestMessages.join(' and ')} messages`,
        `                     flat: ${turn.flatRatio.toFixed(2)}× (goal ≤ 1.3×)  ${turn.flatRatio <= 1.3 ? 'PASS' : 'FAIL'}`,
        '',
      ].join('\n'),
    );
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`sessions benchmark FAILED: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});

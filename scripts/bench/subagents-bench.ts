/**
 * Skills and subagents benchmark. A real server and worker over loopback, the fake LLM behind the real
 * provider code, in this process.
 *
 *   skill reload — from writing a new SKILL.md in the workdir to the server offering it (the skill tool's
 *                  enum in `catalog.modelTools`): the worker's watcher, its rescan and the snapshot's trip.
 *                  Polled every millisecond. Goal: < 1 s (median and p90).
 *   task overhead — a one-step `task` (the child answers at once) against a direct model call, both through
 *                  the same fake LLM and measured alike, interleaved round by round: the direct turn from
 *                  prompt to `turn.ended` (one model request) and the task tool call from its
 *                  `tool-call.started` to its `tool-call.ended` (a child session created, one model request
 *                  in it, every child event wrapped into the parent's stream, the answer stored). Reported:
 *                  medians and the difference.
 *
 * Usage: node scripts/bench/subagents-bench.ts [--quick] [--json] [--rounds N]
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createMolfClient, type MolfClient } from '@molf/client/node';
import type { SessionEvent, WorkerId } from '@molf/protocol';
import { createServer, type MolfServer } from '@molf/server';
import { startFakeLlm } from '@molf/testkit';
import { createWorker } from '@molf/worker';
import { BENCH_OPTIONS } from './bench-flags.ts';
import { percentile } from './bench-stats.ts';

const { values: flags } = parseArgs({ options: BENCH_OPTIONS, strict: true });
const ROUNDS = Number(flags.rounds ?? (flags.quick ? 5 : 20));
const TOKENS = { client: 'molf_c_bench-client-token-0123456789', worker: 'molf_w_bench-worker-token-0123456789' };
const RELOAD_GOAL_MS = 1_000;
const progress = (message: string) => process.stderr.write(`${message}\n`);

async function until(predicate: () => boolean, what: string): Promise<void> {
  const deadline = performance.now() + 60_000;
  while (!predicate()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

async function reloadBench(server: MolfServer, workerId: WorkerId, workdir: string) {
  const offered = (name: string) => {
    const skill = server.catalog.modelTools(workerId)?.find((tool) => tool.name === 'skill');
    const names = (skill?.inputSchema as { properties?: { name?: { enum?: string[] } } } | undefined)?.properties?.name
      ?.enum;
    return names?.includes(name) === true;
  };
  const times: number[] = [];
  for (let round = 0; round <= ROUNDS; round += 1) {
    const name = `bench-skill-${round}`;
    const dir = join(workdir, '.agents', 'skills', name);
    await mkdir(dir, { recursive: true });
    const started = performance.now();
    await writeFile(join(dir, 'SKILL.md'), `---\ndescription: Benchmark skill ${round}\n---\nDo step ${round}.\n`);
    await until(() => offered(name), `skill ${name} to be offered`);
    // The first round creates the skills folder itself (a folder that did not exist at start).
    if (round > 0) times.push(performance.now() - started);
  }
  return { rounds: times.length, medianMs: percentile(times, 0.5), p90Ms: percentile(times, 0.9) };
}

function followTimes(client: MolfClient, sessionId: string) {
  const events: Array<SessionEvent & { receivedAt: number }> = [];
  const subscription = client.rpc.sessions.events.subscribe(
    { sessionId },
    { onData: ({ data }) => events.push({ ...data, receivedAt: performance.now() }) },
  );
  return { events, stop: () => subscription.unsubscribe() };
}

async function taskBench(client: MolfClient, workerId: WorkerId, llm: Awaited<ReturnType<typeof startFakeLlm>>) {
  const direct: number[] = [];
  const task: number[] = [];
  for (let round = 0; round <= ROUNDS; round += 1) {
    // A direct model call: one turn, one request.
    llm.push({ text: 'direct answer' });
    const plain = await client.rpc.sessions.create.mutate({ workerId });
    const plainEvents = followTimes(client, plain.sessionId);
    await client.rpc.auth.whoami.query();
    const sent = performance.now();
    await client.rpc.sessions.prompt.mutate({ sessionId: plain.sessionId, text: 'direct' });
    await until(() => plainEvents.events.some((event) => event.type === 'turn.ended'), 'the direct turn');
    const ended = plainEvents.events.find((event) => event.type === 'turn.ended');
    plainEvents.stop();
    if (round > 0) direct.push((ended?.receivedAt ?? 0) - sent);

    // A task whose child answers in one step.
    const marker = `BENCH-CHILD-${round}`;
    llm.push(
      { toolCalls: [{ name: 'task', arguments: { agent: 'general', description: 'bench', prompt: marker } }] },
      { match: marker, text: 'child answer' },
      { text: 'parent answer' },
    );
    const parent = await client.rpc.sessions.create.mutate({ workerId });
    const parentEvents = followTimes(client, parent.sessionId);
    await client.rpc.auth.whoami.query();
    await client.rpc.sessions.prompt.mutate({ sessionId: parent.sessionId, text: 'delegate' });
    await until(() => parentEvents.events.some((event) => event.type === 'turn.ended'), 'the task turn');
    parentEvents.stop();
    const started = parentEvents.events.find((event) => event.type === 'tool-call.started');
    const finished = parentEvents.events.find((event) => event.type === 'tool-call.ended');
    if (finished?.type !== 'tool-call.ended' || finished.error !== undefined) {
      throw new Error(`the task failed: ${finished?.type === 'tool-call.ended' ? finished.error : 'no result'}`);
    }
    if (round > 0) task.push(finished.receivedAt - (started?.receivedAt ?? 0));
  }
  const directMs = percentile(direct, 0.5);
  const taskMs = percentile(task, 0.5);
  return { rounds: task.length, directMedianMs: directMs, taskMedianMs: taskMs, overheadMs: taskMs - directMs };
}

async function main(): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), 'molf-subagents-bench-'));
  const llm = await startFakeLlm();
  const workdir = join(root, 'workdir');
  await mkdir(workdir, { recursive: true });
  const server = await createServer({
    port: 0,
    dataDir: join(root, 'server'),
    tokens: TOKENS,
    models: { defaultModel: 'fake/m', custom: { fake: { baseURL: llm.baseURL } } },
  });
  const worker = await createWorker({ serverUrl: server.url, token: TOKENS.worker, workdir });
  const client = createMolfClient({ url: server.url, token: TOKENS.client });
  try {
    await worker.registered;
    await client.ready();
    const workerId = worker.workerId as WorkerId;
    await server.permissions.writeText(workerId, JSON.stringify({ '*': 'ask', task: 'allow' }));
    progress(`skill reload: ${ROUNDS} rounds…`);
    const reload = await reloadBench(server, workerId, workdir);
    progress(`task overhead: ${ROUNDS} rounds…`);
    const overhead = await taskBench(client, workerId, llm);
    const result = { reload, task: overhead };
    if (flags.json) {
      process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
      return;
    }
    const ms = (value: number) => `${value.toFixed(1)} ms`;
    const pass = reload.p90Ms < RELOAD_GOAL_MS;
    process.stdout.write(
      [
        '',
        `Skills and subagents benchmark — Node ${process.version}`,
        '',
        `SKILL.md written → offered by the server   median ${ms(reload.medianMs)}  p90 ${ms(reload.p90Ms)}  (goal < 1 s)  ${pass ? 'PASS' : 'FAIL'}`,
        `one-step task vs a direct model call       direct median ${ms(overhead.directMedianMs)}; task median ${ms(overhead.taskMedianMs)}: overhead ${ms(overhead.overheadMs)}`,
        '',
      ].join('\n'),
    );
    if (!pass) process.exitCode = 1;
  } finally {
    await client.close();
    await worker.close();
    await server.close();
    await llm.close();
    await rm(root, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`subagents benchmark FAILED: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});

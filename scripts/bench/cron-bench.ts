/**
 * Cron benchmark (issue 15's budget): the scheduler with 10,000 jobs loaded, and 1,000 jobs due in
 * the same second.
 *
 *   loaded  — a jobs.json of 10,000 valid jobs (50 workers × 200, the cap; every/cron/at schedules
 *             mixed, none due for an hour, built by `newCronJob`) opened by the real store and handed
 *             to the real scheduler, in a fresh process per round, beside an empty file: the time to
 *             open the store and to start the scheduler, and the heap both hold after a collection
 *             (→ bytes per job). And the file's size.
 *   put     — one run recorded (`store.put`, which rewrites and fsyncs the whole file) with 1,000 and
 *             with 10,000 jobs stored, median of 30 (10 with --quick); beside it JSON.stringify of the
 *             same jobs and a plain write + fsync of the same bytes, which say where the time goes.
 *   firing  — 1,000 jobs (100 with --quick) `at` the same second, each prompting its own session, on
 *             a real server (its own process, system clock) with real workers online (200 jobs each)
 *             and the fake LLM answering at once; twice: those jobs alone in jobs.json, then among ten
 *             times as many (the others not due). For each job, from its slot: to its prompt stored
 *             (the run's `at`, taken when the prompt was appended and synced) and to its run recorded
 *             (jobs.json rewritten, `cron.fired` sent): p50, p99, max. Afterwards every prompt is
 *             looked up in its session's history (the user message with the job's id).
 *
 * --rounds N: rounds of the loaded part (5; 2 with --quick); figures are medians. No figure is a
 * pass/fail: the exit code is 1 only when a job failed or never fired, or a part could not run.
 *
 * Usage: node scripts/bench/cron-bench.ts [--quick] [--json] [--rounds N]
 */
import { fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, open, rm, stat, writeFile } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createSilentLogger } from '@molf/logging';
import type { CronAddInput, CronEvent, CronJob, CronScheduleInput, WorkerId } from '@molf/protocol';
import {
  createServer,
  newCronJob,
  openCronJobStore,
  openFileSessionStore,
  openFileStateDocuments,
  startCronScheduler,
} from '@molf/server';
import { type FakeLlm, startFakeLlm } from '@molf/testkit';
import { createWorker, type MolfWorker } from '@molf/worker';
import { BENCH_OPTIONS } from './bench-flags.ts';
import { percentile } from './bench-stats.ts';

const { values: flags } = parseArgs({
  options: {
    ...BENCH_OPTIONS,
    role: { type: 'string' },
    'data-dir': { type: 'string' },
    'llm-url': { type: 'string' },
  },
  strict: true,
});
/** The budget's figures; the loaded part is cheap enough to keep them with --quick. */
const LOADED_JOBS = 10_000;
const JOBS_PER_WORKER = 200;
const ROUNDS = Number(flags.rounds ?? (flags.quick ? 2 : 5));
const PUT_SAMPLES = flags.quick ? 10 : 30;
const DUE_JOBS = flags.quick ? 100 : 1_000;
/** The budget's ratio: 1,000 due among 10,000 loaded. */
const AMONG_FACTOR = 10;
/** The jobs are aimed this far ahead of when their file is written; doubled when the stack was not up in time. */
const FIRST_LEAD_MS = 5_000;
/** Server and workers must be up this long before the slot, or the attempt is discarded. */
const READY_MARGIN_MS = 250;
const ATTEMPTS = 3;
/** A deadline for all due jobs to fire, not a measurement: the machine is shared. */
const FIRING_DEADLINE_MS = 20 * 60_000;
const TOKENS = { client: 'molf_c_bench-client-token-0123456789', worker: 'molf_w_bench-worker-token-0123456789' };
const HOUR_MS = 3_600_000;
const progress = (message: string) => process.stderr.write(`${message}\n`);

type ChildMessage =
  | { type: 'loaded'; jobs: number; openMs: number; startMs: number; heapBytes: number; fired: number }
  | { type: 'ready'; url: string; startupMs: number }
  | { type: 'cron'; event: CronEvent; receivedAt: number }
  | { type: 'cpu'; microseconds: number };

// ---------------------------------------------------------------------------------------------
// Jobs

/**
 * Schedules of every kind, each with its first run at least two hours away, so no job of the file
 * comes due while the benchmark runs (a firing would rewrite the file mid-measurement).
 */
function scheduleFor(index: number, now: Date): CronScheduleInput {
  const later = new Date(now.getTime() + 2 * HOUR_MS).toISOString();
  const hour = (now.getUTCHours() + 3) % 24;
  const minute = index % 60;
  switch (index % 8) {
    case 0:
      return { every: '5m', anchor: later };
    case 1:
      return { every: '1h', anchor: later };
    case 2:
      return { every: '1d' };
    case 3:
      return { cron: `${minute} ${hour} * * *` };
    case 4:
      return { cron: `${minute} ${hour} * * 1-5`, tz: 'UTC' };
    case 5:
      return { cron: `0 ${hour} 1 * *`, tz: 'UTC' };
    case 6:
      return { at: '3d' };
    default:
      return { at: '12h' };
  }
}

/** A valid job of `workerId`, as `cron.add` would store it, varied by `index`. */
function buildJob(index: number, workerId: WorkerId, now: Date): CronJob {
  const input: CronAddInput = {
    workerId,
    schedule: scheduleFor(index, now),
    prompt: `Run the checks of package ${index % 37} and summarise what failed, with the failing test names and the first lines of each error (job ${index}).`,
    ...(index % 2 === 0 ? { session: randomUUID() } : {}),
    ...(index % 3 === 0 ? { onAsk: 'wait' as const, onAskWaitMs: 300_000 } : {}),
    ...(index % 5 === 0 ? { until: '90d' } : {}),
    ...(index % 7 === 0 ? { maxRuns: 100 } : {}),
    ...(index % 11 === 0 ? { missed: 'skip' as const } : {}),
  };
  const job = newCronJob(input, {
    now,
    defaultTimezone: 'UTC',
    minIntervalMs: 60_000,
    createdBy: { client: 'cron-bench' },
    defaultTarget: { type: 'new' },
  });
  if (job.nextRunAt === undefined || Date.parse(job.nextRunAt) < now.getTime() + HOUR_MS) {
    throw new Error(`job ${index} would run within the hour (${job.nextRunAt}): the benchmark's schedules are wrong`);
  }
  return job;
}

/** `count` jobs, `JOBS_PER_WORKER` per worker (the cap), on workers of their own. */
function buildJobs(count: number, now: Date): CronJob[] {
  const jobs: CronJob[] = [];
  let workerId = randomUUID() as WorkerId;
  for (let index = 0; index < count; index += 1) {
    if (index > 0 && index % JOBS_PER_WORKER === 0) workerId = randomUUID() as WorkerId;
    jobs.push(buildJob(index, workerId, now));
  }
  return jobs;
}

/** Writes `{dataDir}/cron/jobs.json` as the store writes it. */
async function writeJobsFile(dataDir: string, jobs: CronJob[]): Promise<string> {
  const dir = join(dataDir, 'cron');
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const path = join(dir, 'jobs.json');
  await writeFile(path, `${JSON.stringify({ version: 1, jobs }, null, 2)}\n`, { mode: 0o600 });
  return path;
}

// ---------------------------------------------------------------------------------------------
// Child processes

function startChild(args: string[], options: { profile?: boolean } = {}) {
  const profileDir = process.env.MOLF_BENCH_PROFILE;
  const child = fork(fileURLToPath(import.meta.url), args, {
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    execArgv: options.profile === true && profileDir !== undefined ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : [],
  });
  const inbox: ChildMessage[] = [];
  const listeners = new Set<(message: ChildMessage) => void>();
  let waiter: ((message: ChildMessage) => void) | undefined;
  child.on('message', (message: ChildMessage) => {
    for (const listener of listeners) listener(message);
    if (message.type === 'cron') return;
    if (waiter === undefined) inbox.push(message);
    else {
      const resolve = waiter;
      waiter = undefined;
      resolve(message);
    }
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  /** The next message other than a cron event. */
  const next = (): Promise<ChildMessage> => {
    const queued = inbox.shift();
    if (queued !== undefined) return Promise.resolve(queued);
    return new Promise<ChildMessage>((resolve, reject) => {
      waiter = resolve;
      void exited.then((code) => reject(new Error(`a benchmark child exited (${code})`)));
    });
  };
  return {
    child,
    next,
    exited,
    /** Every message as it comes, cron events included. */
    listen: (listener: (message: ChildMessage) => void) => listeners.add(listener),
  };
}

/** In a fresh process: the store opened and the scheduler started on `dataDir`, timed and weighed. */
async function runLoad(dataDir: string): Promise<void> {
  // Heap figures need a collection before each reading.
  setFlagsFromString('--expose-gc');
  const collectGarbage = runInNewContext('gc') as () => void;
  collectGarbage();
  const heapBefore = process.memoryUsage().heapUsed;
  const started = performance.now();
  const store = await openCronJobStore({ documents: openFileStateDocuments({ dataDir }) });
  const opened = performance.now();
  let fired = 0;
  const scheduler = await startCronScheduler({
    store,
    logger: createSilentLogger(),
    // Nothing is due for an hour; a call would be the benchmark's mistake, reported as a failure.
    fire: async () => {
      fired += 1;
      return { outcome: 'failed', reason: 'the benchmark fires nothing', retry: false };
    },
  });
  const schedulerStarted = performance.now();
  collectGarbage();
  const heapAfter = process.memoryUsage().heapUsed;
  const jobs = store.list().length;
  await scheduler.close();
  await store.close();
  process.send?.(
    {
      type: 'loaded',
      jobs,
      openMs: opened - started,
      startMs: schedulerStarted - opened,
      heapBytes: heapAfter - heapBefore,
      fired,
    } satisfies ChildMessage,
    () => process.disconnect(),
  );
}

/** The server's process: forwards the scheduler's events and reports its own CPU when asked. */
async function runServer(dataDir: string, llmUrl: string): Promise<void> {
  const server = await createServer({
    port: 0,
    dataDir,
    tokens: TOKENS,
    models: { defaultModel: 'fake/m', custom: { fake: { baseURL: llmUrl } } },
  });
  server.cron.subscribe((event) => {
    process.send?.({ type: 'cron', event, receivedAt: Date.now() } satisfies ChildMessage);
  });
  // performance.now() counts from the process's start: module loading, the stores, the listen.
  process.send?.({ type: 'ready', url: server.url, startupMs: performance.now() } satisfies ChildMessage);
  process.on('message', (message: { type: string }) => {
    if (message.type !== 'cpu') return;
    const usage = process.cpuUsage();
    process.send?.({ type: 'cpu', microseconds: usage.user + usage.system } satisfies ChildMessage);
  });
  process.on('disconnect', () => void server.close().finally(() => process.exit(0)));
}

// ---------------------------------------------------------------------------------------------
// Loaded: start-up time and memory

async function loadOnce(dataDir: string) {
  const load = startChild(['--role', 'load', '--data-dir', dataDir]);
  const message = await load.next();
  await load.exited;
  if (message.type !== 'loaded') throw new Error(`the loading process answered ${message.type}`);
  return message;
}

async function loadedBench(root: string, jobs: CronJob[]) {
  const full = join(root, 'full');
  const empty = join(root, 'empty');
  const path = await writeJobsFile(full, jobs);
  await mkdir(empty, { recursive: true });
  const fileBytes = (await stat(path)).size;
  const withJobs: Array<Extract<ChildMessage, { type: 'loaded' }>> = [];
  const without: Array<Extract<ChildMessage, { type: 'loaded' }>> = [];
  const failures: string[] = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    progress(`cron bench: ${jobs.length} jobs loaded in a fresh process, round ${round + 1}/${ROUNDS}`);
    without.push(await loadOnce(empty));
    const loaded = await loadOnce(full);
    if (loaded.jobs !== jobs.length) failures.push(`the store loaded ${loaded.jobs} of ${jobs.length} jobs`);
    if (loaded.fired > 0) failures.push(`${loaded.fired} jobs fired while loading (none is due)`);
    withJobs.push(loaded);
  }
  const median = (list: typeof withJobs, key: 'openMs' | 'startMs' | 'heapBytes') =>
    percentile(
      list.map((entry) => entry[key]),
      0.5,
    );
  const heapBytes = median(withJobs, 'heapBytes') - median(without, 'heapBytes');
  return {
    result: {
      jobs: jobs.length,
      workers: Math.ceil(jobs.length / JOBS_PER_WORKER),
      fileBytes,
      fileBytesPerJob: Math.round(fileBytes / jobs.length),
      openMs: median(withJobs, 'openMs'),
      startMs: median(withJobs, 'startMs'),
      emptyOpenMs: median(without, 'openMs'),
      emptyStartMs: median(without, 'startMs'),
      heapBytes,
      heapBytesPerJob: Math.round(heapBytes / jobs.length),
      rounds: ROUNDS,
    },
    failures,
  };
}

// ---------------------------------------------------------------------------------------------
// Put: one run recorded

async function putAt(root: string, jobs: CronJob[]) {
  const dataDir = join(root, `put-${jobs.length}`);
  await writeJobsFile(dataDir, jobs);
  const store = await openCronJobStore({ documents: openFileStateDocuments({ dataDir }) });
  try {
    const recordRun = async (index: number) => {
      const job = store.get((jobs[(index * 7919) % jobs.length] as CronJob).jobId) as CronJob;
      const at = new Date().toISOString();
      await store.put({
        ...job,
        runs: job.runs + 1,
        lastRun: { at, scheduledFor: at, outcome: 'started', sessionId: randomUUID(), messageId: randomUUID() },
        updatedAt: at,
      });
    };
    // Warm-up: the code paths compiled, the file once in the store's own format.
    for (let index = 0; index < 3; index += 1) await recordRun(index);
    const puts: number[] = [];
    for (let index = 0; index < PUT_SAMPLES; index += 1) {
      const started = performance.now();
      await recordRun(index + 3);
      puts.push(performance.now() - started);
    }
    const all = store.list();
    const stringify: number[] = [];
    let text = '';
    for (let index = 0; index < PUT_SAMPLES; index += 1) {
      const started = performance.now();
      text = `${JSON.stringify({ version: 1, jobs: all }, null, 2)}\n`;
      stringify.push(performance.now() - started);
    }
    const writes: number[] = [];
    for (let index = 0; index < PUT_SAMPLES; index += 1) {
      const started = performance.now();
      const file = await open(join(dataDir, 'raw.json'), 'w');
      await file.writeFile(text);
      await file.sync();
      await file.close();
      writes.push(performance.now() - started);
    }
    return {
      jobs: jobs.length,
      fileBytes: (await stat(store.path)).size,
      putMedianMs: percentile(puts, 0.5),
      putP99Ms: percentile(puts, 0.99),
      stringifyMedianMs: percentile(stringify, 0.5),
      writeSyncMedianMs: percentile(writes, 0.5),
      samples: PUT_SAMPLES,
    };
  } finally {
    await store.close();
  }
}

// ---------------------------------------------------------------------------------------------
// Firing: many jobs due in the same second, on a real server

class NotReadyInTime extends Error {}

type Fired = {
  type: 'cron.fired' | 'cron.failed';
  at: number;
  receivedAt: number;
  messageId?: string;
  reason?: string;
};

/**
 * One attempt: `due` jobs at a whole second `leadMs` ahead, among `loaded` jobs in all. Throws
 * NotReadyInTime when server and workers came up too late for the slot.
 */
async function fireAttempt(root: string, options: { due: number; loaded: number; leadMs: number }) {
  const { due, loaded } = options;
  const dataDir = join(root, 'server');
  const workerCount = Math.ceil(due / JOBS_PER_WORKER);
  const workerIds = Array.from({ length: workerCount }, () => randomUUID() as WorkerId);
  // Each worker's id is its workdir's: known before it starts, so its jobs can be in the file the server opens.
  const workdirs: string[] = [];
  for (const [index, workerId] of workerIds.entries()) {
    const workdir = join(root, `worker-${index}`);
    await mkdir(join(workdir, '.molf'), { recursive: true });
    await writeFile(
      join(workdir, '.molf', 'worker.json'),
      JSON.stringify({ workerId, createdAt: new Date().toISOString() }),
    );
    workdirs.push(workdir);
  }
  progress(`cron bench: ${due} sessions and ${loaded} jobs (${due} due in the same second)…`);
  const sessions = await openFileSessionStore({ dataDir, logger: createSilentLogger() });
  const sessionIds: string[] = [];
  try {
    for (let index = 0; index < due; index += 1) {
      const workerId = workerIds[Math.floor(index / JOBS_PER_WORKER)] as WorkerId;
      sessionIds.push((await sessions.create({ workerId, name: `cron target ${index}` })).sessionId);
    }
  } finally {
    await sessions.close();
  }
  const now = new Date();
  const slotMs = Math.ceil((now.getTime() + options.leadMs) / 1_000) * 1_000;
  const slot = new Date(slotMs).toISOString();
  const dueJobs = sessionIds.map((sessionId, index) =>
    newCronJob(
      {
        workerId: workerIds[Math.floor(index / JOBS_PER_WORKER)] as WorkerId,
        name: `due ${index}`,
        schedule: { at: slot },
        prompt: `Say done (due job ${index}).`,
        session: sessionId,
      },
      {
        now,
        defaultTimezone: 'UTC',
        minIntervalMs: 60_000,
        createdBy: { client: 'cron-bench' },
        defaultTarget: { type: 'new' },
      },
    ),
  );
  await writeJobsFile(dataDir, [...dueJobs, ...buildJobs(loaded - due, now)]);
  const dueIds = new Set(dueJobs.map((job) => job.jobId));

  const llm: FakeLlm = await startFakeLlm({ turns: Array.from({ length: due }, () => ({ text: 'done' })) });
  const server = startChild(['--role', 'server', '--data-dir', dataDir, '--llm-url', llm.baseURL], { profile: true });
  const fired = new Map<string, Fired>();
  const unexpected: string[] = [];
  let allFired: () => void = () => {};
  const done = new Promise<void>((resolve) => {
    allFired = resolve;
  });
  server.listen((message) => {
    if (message.type !== 'cron') return;
    const { event } = message;
    // Only how runs went: other events (a heartbeat's report) say nothing of the firing.
    if (event.type !== 'cron.fired' && event.type !== 'cron.failed') return;
    if (!dueIds.has(event.jobId)) {
      unexpected.push(`${event.jobId} (${event.type})`);
      return;
    }
    fired.set(event.jobId, {
      type: event.type,
      at: Date.parse(event.at),
      receivedAt: message.receivedAt,
      ...(event.type === 'cron.fired' ? { messageId: event.messageId } : { reason: event.reason }),
    });
    if (fired.size === dueIds.size) allFired();
  });
  const workers: MolfWorker[] = [];
  try {
    const ready = await server.next();
    if (ready.type !== 'ready') throw new Error('the server did not start');
    for (const workdir of workdirs)
      workers.push(await createWorker({ serverUrl: ready.url, token: TOKENS.worker, workdir }));
    await Promise.all(workers.map((worker) => worker.registered));
    const upAt = Date.now();
    if (upAt > slotMs - READY_MARGIN_MS) {
      throw new NotReadyInTime(
        `server and workers were up ${upAt - slotMs + READY_MARGIN_MS} ms too late for the slot`,
      );
    }
    const serverCpu = async () => {
      server.child.send({ type: 'cpu' });
      const answer = await server.next();
      if (answer.type !== 'cpu') throw new Error('the server did not report its CPU');
      return answer.microseconds;
    };
    const cpuBefore = await serverCpu();
    progress(`cron bench: up ${slotMs - upAt} ms before the slot; waiting for ${due} jobs to fire…`);
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, slotMs - Date.now() + FIRING_DEADLINE_MS);
    });
    // A server that dies stops the wait too: its missing jobs are reported as never fired.
    await Promise.race([done, deadline, server.exited]);
    clearTimeout(timer);
    const cpuMs = ((await serverCpu()) - cpuBefore) / 1_000;
    return { slotMs, fired, dueJobs, sessionIds, unexpected, cpuMs, serverStartupMs: ready.startupMs, workerCount };
  } finally {
    for (const worker of workers) await worker.close();
    server.child.disconnect();
    await server.exited;
    await llm.close();
  }
}

async function firingBench(root: string, options: { due: number; loaded: number }) {
  let leadMs = FIRST_LEAD_MS;
  for (let attempt = 1; ; attempt += 1) {
    const dir = join(root, `attempt-${attempt}`);
    try {
      const run = await fireAttempt(dir, { ...options, leadMs });
      return await summarizeFiring(dir, options, run);
    } catch (error) {
      if (!(error instanceof NotReadyInTime) || attempt === ATTEMPTS) throw error;
      progress(`cron bench: ${error.message}; again with the slot ${leadMs * 2} ms ahead`);
      leadMs *= 2;
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
}

/** Delays from the slot, each prompt checked in its session's history. */
async function summarizeFiring(
  root: string,
  options: { due: number; loaded: number },
  run: Awaited<ReturnType<typeof fireAttempt>>,
) {
  const failures: string[] = [];
  const stored: number[] = [];
  const recorded: number[] = [];
  const accepted: number[] = [];
  const failed = [...run.fired.values()].filter((entry) => entry.type === 'cron.failed');
  if (failed.length > 0) failures.push(`${failed.length} jobs failed, the first: ${failed[0]?.reason}`);
  const missing = options.due - run.fired.size;
  if (missing > 0)
    failures.push(`${missing} of ${options.due} jobs never fired within ${FIRING_DEADLINE_MS / 60_000} min`);
  if (run.unexpected.length > 0)
    failures.push(`jobs that were not due fired: ${run.unexpected.slice(0, 3).join(', ')}`);
  const sessions = await openFileSessionStore({ dataDir: join(root, 'server'), logger: createSilentLogger() });
  try {
    for (const [index, job] of run.dueJobs.entries()) {
      const entry = run.fired.get(job.jobId);
      if (entry?.type !== 'cron.fired') continue;
      stored.push(entry.at - run.slotMs);
      recorded.push(entry.receivedAt - run.slotMs);
      const history = await sessions.messages(run.sessionIds[index] as string);
      const prompt = history.find((message) => message.role === 'user' && message.cronJobId === job.jobId);
      if (prompt === undefined || prompt.id !== entry.messageId) {
        failures.push(`job ${job.jobId} fired, but its prompt is not in its session's history`);
      } else {
        accepted.push(Date.parse(prompt.at) - run.slotMs);
      }
    }
  } finally {
    await sessions.close();
  }
  const of = (values: number[]) => ({
    p50: values.length === 0 ? Number.NaN : percentile(values, 0.5),
    p99: values.length === 0 ? Number.NaN : percentile(values, 0.99),
    max: values.length === 0 ? Number.NaN : Math.max(...values),
  });
  return {
    result: {
      due: options.due,
      loaded: options.loaded,
      workers: run.workerCount,
      fired: stored.length,
      serverStartupMs: Math.round(run.serverStartupMs),
      firstStoredMs: stored.length === 0 ? Number.NaN : Math.min(...stored),
      acceptedMs: of(accepted),
      storedMs: of(stored),
      recordedMs: of(recorded),
      serverCpuMs: Math.round(run.cpuMs),
    },
    failures,
  };
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  if (flags.role === 'load') return runLoad(flags['data-dir'] as string);
  if (flags.role === 'server') return runServer(flags['data-dir'] as string, flags['llm-url'] as string);
  const loadBefore = loadavg()[0] as number;
  const root = await mkdtemp(join(tmpdir(), 'molf-cron-bench-'));
  const failures: string[] = [];
  try {
    progress(`cron bench: building ${LOADED_JOBS} jobs…`);
    const jobs = buildJobs(LOADED_JOBS, new Date());
    const loaded = await loadedBench(join(root, 'loaded'), jobs);
    failures.push(...loaded.failures);
    progress(`cron bench: one run recorded, ${PUT_SAMPLES} times at 1,000 and at ${LOADED_JOBS} jobs`);
    const put = [await putAt(root, jobs.slice(0, 1_000)), await putAt(root, jobs)];
    const alone = await firingBench(join(root, 'alone'), { due: DUE_JOBS, loaded: DUE_JOBS });
    failures.push(...alone.failures);
    const among = await firingBench(join(root, 'among'), { due: DUE_JOBS, loaded: DUE_JOBS * AMONG_FACTOR });
    failures.push(...among.failures);
    const loadAfter = loadavg()[0] as number;
    const results = {
      machine: { node: process.version, cores: availableParallelism(), loadBefore, loadAfter },
      loaded: loaded.result,
      put,
      firing: { alone: alone.result, among: among.result },
      failures,
    };
    if (flags.json) process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
    else printReport(results);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
  if (failures.length > 0) {
    process.stderr.write(`cron benchmark FAILED:\n${failures.map((failure) => `  ${failure}`).join('\n')}\n`);
    process.exit(1);
  }
}

type Results = {
  machine: { node: string; cores: number; loadBefore: number; loadAfter: number };
  loaded: Awaited<ReturnType<typeof loadedBench>>['result'];
  put: Array<Awaited<ReturnType<typeof putAt>>>;
  firing: Record<'alone' | 'among', Awaited<ReturnType<typeof summarizeFiring>>['result']>;
};

function printReport({ machine, loaded, put, firing }: Results): void {
  const ms = (value: number) =>
    value >= 100 ? `${Math.round(value).toLocaleString('en')} ms` : `${value.toFixed(1)} ms`;
  const count = (value: number) => value.toLocaleString('en');
  const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
  const spread = (figures: { p50: number; p99: number; max: number }) =>
    `p50 ${ms(figures.p50)}  p99 ${ms(figures.p99)}  max ${ms(figures.max)}`;
  const firingLines = (label: string, run: Results['firing']['alone']) => [
    `  ${label}: ${count(run.fired)} of ${count(run.due)} fired; ${run.workers} worker${run.workers === 1 ? '' : 's'}; server up ${ms(run.serverStartupMs)} after its process started`,
    `    slot → prompt taken      ${spread(run.acceptedMs)}  (the stored message's at: before its append and sync)`,
    `    slot → prompt stored     ${spread(run.storedMs)}  (first ${ms(run.firstStoredMs)}; the run's at: appended and synced)`,
    `    slot → run recorded      ${spread(run.recordedMs)}  (jobs.json rewritten, cron.fired sent)`,
    `    server CPU               ${ms(run.serverCpuMs)} from before the slot to the last run recorded`,
  ];
  process.stdout.write(
    [
      '',
      `Cron benchmark — Node ${machine.node}, ${machine.cores} cores, load average ${machine.loadBefore.toFixed(1)} → ${machine.loadAfter.toFixed(1)}`,
      '',
      `${count(loaded.jobs)} jobs loaded (${loaded.workers} workers × ${JOBS_PER_WORKER}); medians of ${loaded.rounds} round${loaded.rounds === 1 ? '' : 's'}, each a fresh process, beside an empty file`,
      `  jobs.json                  ${mib(loaded.fileBytes)} (${count(loaded.fileBytesPerJob)} bytes a job)`,
      `  open the store             ${ms(loaded.openMs)}  (empty: ${ms(loaded.emptyOpenMs)})`,
      `  start the scheduler        ${ms(loaded.startMs)}  (empty: ${ms(loaded.emptyStartMs)})`,
      `  heap held                  +${mib(loaded.heapBytes)} over the empty one = ${count(loaded.heapBytesPerJob)} bytes a job`,
      '',
      `one run recorded (store.put rewrites and fsyncs the whole file); medians of ${put[0]?.samples} after 3 warm-ups`,
      ...put.map(
        (entry) =>
          `  ${count(entry.jobs).padStart(6)} jobs stored (${mib(entry.fileBytes)})  put ${ms(entry.putMedianMs)} (p99 ${ms(entry.putP99Ms)}); of the same jobs: JSON.stringify ${ms(entry.stringifyMedianMs)}, write + fsync ${ms(entry.writeSyncMedianMs)}`,
      ),
      '',
      `${count(firing.alone.due)} jobs due in the same second, each prompting its own session (server in its own process, fake LLM and workers in this one)`,
      ...firingLines('alone in jobs.json', firing.alone),
      ...firingLines(`among ${count(firing.among.loaded)} jobs`, firing.among),
      '',
    ].join('\n'),
  );
}

main().catch((error: unknown) => {
  process.stderr.write(`cron benchmark FAILED: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});

/**
 * Cluster benchmark: one `molf` server against three on one PostgreSQL, with many sessions streaming
 * at once (issue 18).
 *
 * Processes: a throw-away PostgreSQL cluster with durable commits (one fresh database per run), the
 * fake LLM (a child), each server instance (a child, its own data dir, the database shared), and
 * this process with the workers and the clients. WORKERS workers connect round-robin to the
 * instances, and a session's turns run where its worker is connected; CLIENTS clients connect
 * round-robin too, and a session is followed by a client chosen independently of its worker, so with
 * three instances about two sessions in three are read on an instance other than the one running
 * them, through the database (rows + NOTIFY), as behind a load balancer without stickiness.
 *
 * For each instance count and each load (100, 500 and 1,000 sessions; 50 and 200 with --quick),
 * every session gets one prompt at once; the fake LLM answers each with CHUNKS text chunks, one
 * every INTERVAL ms, each stamped with the time it was sent. Measured:
 *
 *   event latency   a chunk leaving the fake LLM → its text at the client (p50, p99 of every chunk).
 *   prompt latency  a prompt sent → the first event of its turn at the client, and → its first text.
 *   turns           turns ended per second (first prompt → last turn.ended). Every prompt must run
 *                   exactly one turn that ends `completed`: a refused prompt, another end, a turn
 *                   still running at the deadline, a prompt run twice (a second turn.started, or
 *                   the fake LLM asked more often than prompted) is a failure, reported and making
 *                   the exit code 1.
 *   CPU             from /proc, first prompt → last turn.ended: each instance, PostgreSQL (the
 *                   postmaster and its children), the fake LLM and this process (the workers and
 *                   clients: near a whole core, the bench itself would be the bottleneck). The
 *                   database's share is PostgreSQL / (PostgreSQL + instances).
 *   database        NOTIFY announcements of events (counted by a listener of this process), write
 *                   transactions, WAL bytes, and pg_stat_activity sampled every 100 ms: how many of
 *                   the instances' connections were running a statement, and what they waited on;
 *                   each second, whether the sessions' leases are held where their workers are.
 *
 * Then, per load of one instance, the sessions three instances sustain at that p99 (interpolated
 * between their measured loads), and the targets beside the figures. Targets are reported, never
 * asserted: a missed one does not change the exit code.
 *
 * Usage: node scripts/bench/cluster-bench.ts [--quick] [--json] [--sessions 100,500,1000]
 *        [--instances 1,3] [--chunks N] [--interval MS] [--workers N] [--clients N] [--fast-commits]
 *        [--instance-cpu SHARE] [--repeat N]
 * --repeat runs each configuration N times; the capacity comparison takes each one's median p99.
 * --instance-cpu (root; cgroups) gives each instance SHARE of a core of its own (a CFS quota, e.g.
 * 0.3), so that three instances have three times one instance's CPU, as a core per instance would,
 * scaled down: what a machine with fewer cores than instances cannot otherwise show.
 * --fast-commits (a diagnostic) runs PostgreSQL without waiting for the disk, to show what the WAL
 * flush costs; MOLF_BENCH_PROFILE=DIR writes a CPU profile of each instance there.
 */
import { type ChildProcess, execFileSync, fork } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createMolfClient, type MolfClient } from '@molf/client/node';
import { createLogger, createSilentLogger } from '@molf/logging';
import type { SessionEvent, WorkerId } from '@molf/protocol';
import { createServer, type Database, openDatabase } from '@molf/server';
import {
  findPostgresPrograms,
  type PostgresCluster,
  startFakeLlm,
  startPostgresCluster,
  stopProcessGroup,
} from '@molf/testkit';
import { createWorker, type MolfWorker } from '@molf/worker';
import { BENCH_OPTIONS } from './bench-flags.ts';
import { percentile } from './bench-stats.ts';
import { createCpuQuota } from './cpu-quota.ts';

const { values: flags } = parseArgs({
  options: {
    ...BENCH_OPTIONS,
    role: { type: 'string' },
    llm: { type: 'string' },
    'data-dir': { type: 'string' },
    database: { type: 'string' },
    turns: { type: 'string' },
    sessions: { type: 'string' },
    instances: { type: 'string' },
    chunks: { type: 'string' },
    interval: { type: 'string' },
    workers: { type: 'string' },
    clients: { type: 'string' },
    'fast-commits': { type: 'boolean', default: false },
    'instance-cpu': { type: 'string' },
    repeat: { type: 'string' },
  },
  strict: true,
});

function parseCounts(text: string, what: string): number[] {
  const counts = text.split(',').map((part) => Number(part.trim()));
  if (counts.some((count) => !Number.isInteger(count) || count < 1)) {
    throw new Error(`--${what} takes whole numbers ≥ 1, comma-separated (got "${text}")`);
  }
  return counts;
}

const LOADS = parseCounts(flags.sessions ?? (flags.quick ? '50,200' : '100,500,1000'), 'sessions');
const INSTANCE_COUNTS = parseCounts(flags.instances ?? '1,3', 'instances');
/** Runs of each configuration; the capacity comparison takes each configuration's median p99. */
const REPEAT = parseCounts(flags.repeat ?? '1', 'repeat')[0] as number;
const [CHUNKS, INTERVAL_MS, WORKERS, CLIENTS] = [
  parseCounts(flags.chunks ?? '20', 'chunks')[0],
  parseCounts(flags.interval ?? '100', 'interval')[0],
  parseCounts(flags.workers ?? '12', 'workers')[0],
  parseCounts(flags.clients ?? '12', 'clients')[0],
] as [number, number, number, number];
/** A turn still running this long after the prompts were sent counts as never ended. */
const DEADLINE_MS = flags.quick ? 60_000 : 120_000;
/** How long after the last turn ended the bench still watches for turns that should not be. */
const SETTLE_MS = 1_500;
/**
 * Turns every configuration runs before it measures (WARM_UP_PER_WORKER per worker, so on every
 * instance), as a deployed instance has run turns before: its code compiled and its pool connected.
 * Without them, each instance's first turns pay for that, three times over with three instances.
 */
const WARM_UP_PER_WORKER = 2;
/** Sessions created at once before the run (creation is not measured). */
const CREATE_CONCURRENCY = 16;
/** The instances' pool size: the server's default, as a deployment gets it. */
const POOL_SIZE = 10;
/** The channel the PostgreSQL event log announces stored events on (apps/server/src/sessions/postgres-event-log.ts). */
const EVENTS_CHANNEL = 'molf_session_events';
/** A diagnostic: commits that do not wait for the disk (fsync off), to see what the WAL flush costs. */
const FAST_COMMITS = flags['fast-commits'];
/**
 * Each instance's own share of a core (a CFS quota), or none: N instances then have N times one
 * instance's CPU, as with a core per instance, scaled down to fit a small machine.
 */
const INSTANCE_CPU = flags['instance-cpu'] === undefined ? undefined : Number(flags['instance-cpu']);
if (INSTANCE_CPU !== undefined && !(INSTANCE_CPU > 0 && INSTANCE_CPU <= 64)) {
  throw new Error(`--instance-cpu takes a share of a core, such as 0.3 (got "${flags['instance-cpu']}")`);
}
const TARGETS = { sessionsRatio: 2.5, p99AtThousandMs: 50, postgresAppendP99Ms: 2 };
const TOKENS = { client: 'molf_c_cluster-bench-client-token-0123', worker: 'molf_w_cluster-bench-worker-token-0123' };
const progress = (message: string) => process.stderr.write(`${message}\n`);
const wallClock = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise<void>((resolveSleep) => setTimeout(resolveSleep, ms));

type ChildMessage = { type: 'ready'; url: string } | { type: 'requests'; count: number };

/** The fake LLM's process: answers every request with a stamped, paced stream. */
async function runLlm(): Promise<void> {
  const llm = await startFakeLlm({
    turns: Array.from({ length: Number(flags.turns) }, () => ({
      text: Array.from({ length: CHUNKS }, (_, index) => `w${index} `),
      chunkDelayMs: INTERVAL_MS,
      stampChunks: true,
    })),
  });
  process.send?.({ type: 'ready', url: llm.baseURL } satisfies ChildMessage);
  process.on('message', (message: { type: string }) => {
    if (message.type === 'requests') {
      process.send?.({ type: 'requests', count: llm.requests.length } satisfies ChildMessage);
    }
  });
  process.on('disconnect', () => void llm.close().finally(() => process.exit(0)));
}

/** One server instance's process: warnings and errors go to stdout as JSON lines, which the bench counts. */
async function runServer(): Promise<void> {
  const logger = await createLogger({ name: 'server', level: 'warn', console: 'json' });
  const server = await createServer({
    port: 0,
    dataDir: flags['data-dir'] as string,
    tokens: TOKENS,
    logger,
    models: { defaultModel: 'fake/m', custom: { fake: { baseURL: flags.llm as string } } },
    database: { url: flags.database as string, maxConnections: POOL_SIZE },
  });
  process.send?.({ type: 'ready', url: server.url } satisfies ChildMessage);
  process.on('disconnect', () => void server.close().finally(() => process.exit(0)));
}

/** A child of this script (`--role`), leading its own process group so that stopping it stops all it started. */
type BenchChild = {
  name: string;
  pid: number;
  ready: Promise<string>;
  /** The fake LLM: how many requests it has answered. */
  ask(question: 'requests'): Promise<number>;
  exited: Promise<void>;
  /** Warning and error lines the child logged, and the first few of them. */
  logged: { warnings: number; errors: number; first: string[] };
  stop(): Promise<void>;
};

function forkChild(name: string, args: string[], options: { profile?: boolean } = {}): BenchChild {
  const profileDir = process.env.MOLF_BENCH_PROFILE;
  const child: ChildProcess = fork(fileURLToPath(import.meta.url), args, {
    detached: true,
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
    execArgv: options.profile === true && profileDir !== undefined ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : [],
  });
  const exited = new Promise<void>((resolveExit) => child.once('exit', () => resolveExit()));
  const waiting = new Map<ChildMessage['type'], (message: ChildMessage) => void>();
  child.on('message', (message: ChildMessage) => {
    const answer = waiting.get(message.type);
    waiting.delete(message.type);
    answer?.(message);
  });
  const next = <T extends ChildMessage['type']>(type: T) =>
    new Promise<Extract<ChildMessage, { type: T }>>((resolveNext, reject) => {
      if (child.exitCode !== null || child.signalCode !== null) {
        reject(new Error(`${name} exited (${child.exitCode ?? child.signalCode})`));
        return;
      }
      waiting.set(type, resolveNext as (message: ChildMessage) => void);
      child.once('exit', (code, signal) => reject(new Error(`${name} exited (${code ?? signal}) before it answered`)));
    });
  const ready = next('ready').then((message) => message.url);
  ready.catch(() => {});
  const logged = { warnings: 0, errors: 0, first: [] as string[] };
  if (child.stdout !== null) {
    createInterface({ input: child.stdout }).on('line', (line) => {
      let entry: { level?: number; msg?: string; err?: { message?: string } };
      try {
        entry = JSON.parse(line) as typeof entry;
      } catch {
        entry = { level: 50, msg: line };
      }
      if ((entry.level ?? 0) >= 50) logged.errors += 1;
      else logged.warnings += 1;
      if (logged.first.length < 5) {
        logged.first.push(`${entry.msg ?? ''}${entry.err?.message === undefined ? '' : `: ${entry.err.message}`}`);
      }
    });
  }
  let stopping: Promise<void> | undefined;
  return {
    name,
    pid: child.pid as number,
    ready,
    ask(question) {
      const answer = next(question).then((message) => message.count);
      child.send({ type: question });
      return answer;
    },
    exited,
    logged,
    stop() {
      stopping ??= (async () => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        // Disconnecting asks the child to close; the group gets SIGTERM, then SIGKILL, if it does not.
        if (child.connected) child.disconnect();
        await Promise.race([exited, sleep(10_000)]);
        await stopProcessGroup({ pid: child.pid, exited, graceMs: 5_000 });
      })();
      return stopping;
    },
  };
}

/** Milliseconds of one clock tick, the unit of /proc/<pid>/stat's times. */
const TICK_MS = 1_000 / Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim() || 100);

type ProcessTimes = { ppid: number; ownMs: number; reapedChildrenMs: number };

/** utime + stime (and the reaped children's cutime + cstime) of a process, from /proc; undefined once it is gone. */
function readProcessTimes(pid: number): ProcessTimes | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // Fields after the command name (which may hold spaces), numbered from 3 (state).
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const field = (number: number) => Number(fields[number - 3]);
  return {
    ppid: field(4),
    ownMs: (field(14) + field(15)) * TICK_MS,
    reapedChildrenMs: (field(16) + field(17)) * TICK_MS,
  };
}

function processIds(): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number);
}

/** The postmaster of the cluster listening on `port`: the `postgres` process started with `-p port`. */
function findPostmaster(port: number): number {
  for (const pid of processIds()) {
    let args: string[];
    try {
      args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    } catch {
      continue;
    }
    const at = args.indexOf('-p');
    if (args[0]?.endsWith('/postgres') === true && at !== -1 && args[at + 1] === String(port)) return pid;
  }
  throw new Error(`no postmaster found listening on port ${port}`);
}

/**
 * PostgreSQL's CPU so far: the postmaster's own and its reaped children's (backends that ended),
 * plus every live child's (backends, WAL writer, checkpointer…), found by their parent pid.
 */
function postgresCpuMs(postmaster: number): number {
  const root = readProcessTimes(postmaster);
  if (root === undefined) throw new Error('the PostgreSQL cluster is gone');
  let total = root.ownMs + root.reapedChildrenMs;
  for (const pid of processIds()) {
    const times = readProcessTimes(pid);
    if (times?.ppid === postmaster) total += times.ownMs;
  }
  return total;
}

type CpuSnapshot = { instances: number[]; postgres: number; llm: number; bench: number };

function readCpu(children: { instances: BenchChild[]; llm: BenchChild }, postmaster: number): CpuSnapshot {
  const own = (child: BenchChild) => readProcessTimes(child.pid)?.ownMs ?? Number.NaN;
  const usage = process.cpuUsage();
  return {
    instances: children.instances.map(own),
    postgres: postgresCpuMs(postmaster),
    llm: own(children.llm),
    bench: (usage.user + usage.system) / 1_000,
  };
}

/**
 * What the instances' connections do, sampled from pg_stat_activity every 100 ms while the run
 * lasts; and each second, of the sessions' leases held, how many are held by the instance their
 * worker is connected to (where the bench expects the turns to run).
 */
function sampleActivity(database: Database) {
  let samples = 0;
  let active = 0;
  const waits = new Map<string, number>();
  const placement = { leases: 0, withTheirWorker: 0 };
  let running = true;
  const loop = (async () => {
    while (running) {
      const rows = await database.sql<{ wait: string; count: number }[]>`
        select coalesce(wait_event_type || ':' || wait_event, 'running') as wait, count(*)::int as count
        from pg_stat_activity
        where datname = current_database() and application_name = 'molf-server' and state = 'active'
        group by 1`;
      samples += 1;
      for (const row of rows) {
        active += row.count;
        waits.set(row.wait, (waits.get(row.wait) ?? 0) + row.count);
      }
      if (samples % 10 === 1) {
        const [held] = await database.sql<{ leases: number; placed: number }[]>`
          select count(*)::int as leases, count(*) filter (where lease.instance_id = worker.instance_id)::int as placed
          from session_leases lease
          join sessions session using (session_id)
          left join worker_connections worker on worker.worker_id = session.worker_id`;
        placement.leases += held?.leases ?? 0;
        placement.withTheirWorker += held?.placed ?? 0;
      }
      await sleep(100);
    }
  })();
  return async () => {
    running = false;
    await loop;
    const byShare = [...waits.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 4)
      .map(([wait, count]) => ({ wait, share: active === 0 ? 0 : count / active }));
    return {
      meanActiveConnections: samples === 0 ? 0 : active / samples,
      waits: byShare,
      leasesWithTheirWorker: placement.leases === 0 ? Number.NaN : placement.withTheirWorker / placement.leases,
    };
  };
}

type SessionRun = {
  sessionId: string;
  client: MolfClient;
  crossInstance: boolean;
  sentAt?: number;
  firstEventAt?: number;
  firstDeltaAt?: number;
  /** When its first turn ended. */
  endedAt?: number;
  turnsStarted: number;
  /** The reason of every turn.ended, in order. */
  ends: string[];
  /** Why it could not run: the prompt refused, the subscription failed. */
  failure?: string;
};

async function mapConcurrently<T, R>(items: readonly T[], limit: number, task: (item: T, index: number) => Promise<R>) {
  const results: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const index = next;
        next += 1;
        results[index] = await task(items[index] as T, index);
      }
    }),
  );
  return results;
}

/** Runs `turns` turns at once, each in a session of its own, the sessions spread over the workers; resolves when all ended. */
async function warmUp(clients: readonly MolfClient[], workers: readonly MolfWorker[], turns: number): Promise<void> {
  await Promise.all(
    Array.from({ length: turns }, async (_, index) => {
      const client = clients[index % clients.length] as MolfClient;
      const worker = workers[index % workers.length] as MolfWorker;
      const { sessionId } = await client.rpc.sessions.create.mutate({ workerId: worker.workerId });
      const ended = Promise.withResolvers<void>();
      const subscription = client.rpc.sessions.events.subscribe(
        { sessionId, fromNow: true },
        {
          onData: ({ data }: { data: SessionEvent }) => {
            if (data.type === 'turn.ended') ended.resolve();
          },
          onError: (error: unknown) => ended.reject(error),
        },
      );
      try {
        // The subscription is live once a later round trip on the same client returned.
        await client.rpc.auth.whoami.query();
        await client.rpc.sessions.prompt.mutate({ sessionId, text: 'warm up' });
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([
          ended.promise,
          new Promise((_, reject) => {
            timer = setTimeout(() => reject(new Error('a warm-up turn never ended')), DEADLINE_MS);
          }),
        ]).finally(() => clearTimeout(timer));
      } finally {
        subscription.unsubscribe();
      }
    }),
  );
}

async function waitFor(what: string, check: () => Promise<boolean>, deadlineMs = 60_000): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

const STAMP = /⟨(\d+\.\d+)⟩/g;
const figures = (values: number[]) =>
  values.length === 0
    ? { p50Ms: Number.NaN, p99Ms: Number.NaN }
    : { p50Ms: percentile(values, 0.5), p99Ms: percentile(values, 0.99) };

type RunResult = Awaited<ReturnType<typeof runConfiguration>>;

/** One load on one instance count, on a fresh database; everything it started is stopped before it returns. */
async function runConfiguration(options: {
  cluster: PostgresCluster;
  postmaster: number;
  root: string;
  instances: number;
  sessions: number;
  /** Which run of this configuration (1 unless --repeat). */
  run: number;
  track: (stop: () => Promise<void>) => void;
}) {
  const { cluster, postmaster, instances, sessions: load } = options;
  const name = `molf_bench_${instances}x${load}_${options.run}`;
  const url = await cluster.createDatabase(name);
  const root = join(options.root, name);
  const cleanups: Array<() => Promise<void>> = [];
  const cleanUp = async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
    cleanups.length = 0;
  };
  options.track(cleanUp);
  cleanups.push(() => cluster.dropDatabase(name));
  try {
    const shape = ['--chunks', String(CHUNKS), '--interval', String(INTERVAL_MS)];
    const warmUps = WARM_UP_PER_WORKER * WORKERS;
    const llm = forkChild('fake LLM', ['--role', 'llm', '--turns', String(load + warmUps), ...shape]);
    cleanups.push(() => llm.stop());
    const llmUrl = await llm.ready;
    const servers = Array.from({ length: instances }, (_, index) => {
      const server = forkChild(
        `instance ${index + 1}`,
        [
          '--role',
          'server',
          '--llm',
          llmUrl,
          '--data-dir',
          join(root, `server-${index + 1}`),
          '--database',
          url,
          ...shape,
        ],
        { profile: true },
      );
      cleanups.push(() => server.stop());
      if (INSTANCE_CPU !== undefined) {
        const quota = createCpuQuota(`molf-bench-${process.pid}-${name}-${index + 1}`, INSTANCE_CPU);
        cleanups.push(async () => quota.remove());
        quota.confine(server.pid);
      }
      return server;
    });
    const urls = await Promise.all(servers.map((server) => server.ready));
    const stats = await openDatabase({
      url,
      logger: createSilentLogger(),
      maxConnections: 2,
      applicationName: 'molf-bench',
    });
    cleanups.push(() => stats.close());

    // The workers connect and register all at once, as after an instance's restart.
    const workers: MolfWorker[] = await Promise.all(
      Array.from({ length: WORKERS }, async (_, index) => {
        const workdir = join(root, `workdir-${index + 1}`);
        await mkdir(workdir, { recursive: true });
        const worker = await createWorker({
          serverUrl: urls[index % instances] as string,
          token: TOKENS.worker,
          workdir,
          catalog: false,
          mcp: false,
        });
        cleanups.push(() => worker.close());
        return worker;
      }),
    );
    await Promise.all(workers.map((worker) => worker.registered));
    const clients: MolfClient[] = [];
    for (let index = 0; index < CLIENTS; index += 1) {
      const client = createMolfClient({ url: urls[index % instances] as string, token: TOKENS.client });
      cleanups.push(() => client.close());
      await client.ready({ timeoutMs: 60_000 });
      clients.push(client);
    }
    // The workers leave all at once, then the instances stop.
    cleanups.push(async () => {
      await Promise.all(workers.map((worker) => worker.close()));
      await Promise.all(servers.map((server) => server.stop()));
    });
    const workerIds = new Set<WorkerId>(workers.map((worker) => worker.workerId));
    for (const client of clients) {
      await waitFor('every worker listed online on every instance', async () => {
        const listed = await client.rpc.workers.list.query();
        return (
          listed.filter((worker) => workerIds.has(worker.workerId) && worker.state === 'online').length ===
          workerIds.size
        );
      });
    }

    progress(`  ${instances} instance(s), ${load} sessions: warming up with ${warmUps} turns…`);
    await warmUp(clients, workers, warmUps);

    progress(`  ${instances} instance(s), ${load} sessions: creating them…`);
    const runs = await mapConcurrently(
      Array.from({ length: load }, (_, index) => index),
      CREATE_CONCURRENCY,
      async (index): Promise<SessionRun> => {
        // The worker and the client are chosen independently, so a session is read where it runs one time in `instances`.
        const workerIndex = index % WORKERS;
        const clientIndex = Math.floor(index / WORKERS) % CLIENTS;
        const client = clients[clientIndex] as MolfClient;
        const worker = workers[workerIndex] as MolfWorker;
        const { sessionId } = await client.rpc.sessions.create.mutate({ workerId: worker.workerId });
        return {
          sessionId,
          client,
          crossInstance: workerIndex % instances !== clientIndex % instances,
          turnsStarted: 0,
          ends: [],
        };
      },
    );

    const latencies: number[] = [];
    /** The same, split by where the session was read: on the instance running it, or on another. */
    const latenciesBy = { local: [] as number[], remote: [] as number[] };
    let events = 0;
    let ended = 0;
    const allEnded = Promise.withResolvers<void>();
    const settled = (run: SessionRun) => {
      if (run.endedAt !== undefined || run.failure !== undefined) return;
      run.endedAt = wallClock();
      ended += 1;
      if (ended === load) allEnded.resolve();
    };
    const subscriptions = runs.map((run) =>
      run.client.rpc.sessions.events.subscribe(
        { sessionId: run.sessionId, fromNow: true },
        {
          onData: ({ data }: { data: SessionEvent }) => {
            const now = wallClock();
            events += 1;
            if (run.sentAt !== undefined) run.firstEventAt ??= now;
            if (data.type === 'message.delta') {
              run.firstDeltaAt ??= now;
              for (const match of data.text.matchAll(STAMP)) {
                const latency = now - Number(match[1]);
                latencies.push(latency);
                latenciesBy[run.crossInstance ? 'remote' : 'local'].push(latency);
              }
            } else if (data.type === 'turn.started') {
              run.turnsStarted += 1;
            } else if (data.type === 'turn.ended') {
              run.ends.push(data.reason);
              settled(run);
            }
          },
          onError: (error: unknown) => {
            settled(run);
            run.failure ??= `subscription failed: ${(error as Error).message}`;
          },
        },
      ),
    );
    cleanups.push(async () => {
      for (const subscription of subscriptions) subscription.unsubscribe();
    });
    // Subscriptions are live once the server has them; a round trip on each client makes sure.
    await Promise.all(clients.map((client) => client.rpc.auth.whoami.query()));

    let notifications = 0;
    let notifiedEvents = 0;
    const listening = await stats.sql.listen(EVENTS_CHANNEL, (payload) => {
      notifications += 1;
      notifiedEvents += payload.split(',').length;
    });
    cleanups.push(() => listening.unlisten().catch(() => {}));
    const [before] = await stats.sql<{ lsn: string; xid: string; xacts: string }[]>`
      select pg_current_wal_lsn()::text as lsn, txid_current()::text as xid, (select xact_commit + xact_rollback from pg_stat_database where datname = current_database())::text as xacts`;
    const stopSampling = sampleActivity(stats);
    const children = { instances: servers, llm };
    const cpuBefore = readCpu(children, postmaster);

    progress(`  ${instances} instance(s), ${load} sessions: streaming ${CHUNKS} chunks every ${INTERVAL_MS} ms…`);
    const started = wallClock();
    const refused: string[] = [];
    const prompts = runs.map((run) => {
      run.sentAt = wallClock();
      return run.client.rpc.sessions.prompt.mutate({ sessionId: run.sessionId, text: 'go' }).then(
        () => undefined,
        (error: unknown) => {
          refused.push((error as Error).message);
          settled(run);
          run.failure ??= 'prompt refused';
        },
      );
    });
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      allEnded.promise,
      new Promise((resolveLate) => (timer = setTimeout(resolveLate, DEADLINE_MS))),
    ]);
    clearTimeout(timer);
    const lastEnd = Math.max(started, ...runs.map((run) => run.endedAt ?? started));
    const cpuAfter = readCpu(children, postmaster);
    const activity = await stopSampling();
    // A turn run a second time (a prompt taken for one cut off) would start after the first ended.
    await sleep(SETTLE_MS);
    const modelRequests = await llm.ask('requests');
    const [after] = await stats.sql<{ lsn: string; xid: string; wal: string; rows: string; xacts: string }[]>`
      select pg_current_wal_lsn()::text as lsn, txid_current()::text as xid, (select xact_commit + xact_rollback from pg_stat_database where datname = current_database())::text as xacts,
        pg_wal_lsn_diff(pg_current_wal_lsn(), ${before?.lsn as string}::pg_lsn)::text as wal,
        (select count(*) from session_events)::text as rows`;
    await Promise.allSettled(prompts);

    const seconds = (lastEnd - started) / 1_000;
    const delta = (key: 'postgres' | 'llm' | 'bench') => cpuAfter[key] - cpuBefore[key];
    const instancesCpu = cpuAfter.instances.map((value, index) => value - (cpuBefore.instances[index] ?? 0));
    const instancesMs = instancesCpu.reduce((sum, value) => sum + value, 0);
    const postgresMs = delta('postgres');
    const failures = new Map<string, number>();
    const fail = (what: string, count = 1) => failures.set(what, (failures.get(what) ?? 0) + count);
    let neverEnded = 0;
    for (const run of runs) {
      if (run.failure !== undefined) fail(run.failure);
      else if (run.ends.length === 0) neverEnded += 1;
      for (const reason of run.ends) if (reason !== 'completed') fail(`turns ended ${reason}`);
      if (run.turnsStarted > 1) fail('extra turns (a prompt run again)', run.turnsStarted - 1);
      if (run.turnsStarted > run.ends.length && run.ends.length > 0) fail('extra turns still running');
    }
    if (modelRequests !== load + warmUps) fail(`model requests ${modelRequests - warmUps} for ${load} prompts`);
    const completed = runs.filter((run) => run.ends[0] === 'completed').length;
    const sinceSent = (at: 'firstEventAt' | 'firstDeltaAt') =>
      runs.flatMap((run) => (run[at] === undefined || run.sentAt === undefined ? [] : [run[at] - run.sentAt]));
    return {
      instances,
      sessions: load,
      run: options.run,
      crossInstanceShare: runs.filter((run) => run.crossInstance).length / load,
      seconds: Math.round(seconds * 100) / 100,
      turns: {
        completed,
        failed: Object.fromEntries(failures),
        neverEnded,
        refusedPrompts: refused.slice(0, 3),
        perSecond: completed / seconds,
      },
      chunks: latencies.length,
      events,
      eventLatency: figures(latencies),
      eventLatencyReadHere: figures(latenciesBy.local),
      eventLatencyReadElsewhere: figures(latenciesBy.remote),
      promptToFirstEvent: figures(sinceSent('firstEventAt')),
      promptToFirstDelta: figures(sinceSent('firstDeltaAt')),
      cpu: {
        instancesMs: Math.round(instancesMs),
        perInstanceMs: instancesCpu.map(Math.round),
        postgresMs: Math.round(postgresMs),
        llmMs: Math.round(delta('llm')),
        benchMs: Math.round(delta('bench')),
        databaseShare: postgresMs / (postgresMs + instancesMs),
        /** Of the machine's cores, how busy over the run (all the processes above). */
        machineBusy: (instancesMs + postgresMs + delta('llm') + delta('bench')) / (seconds * 1_000 * cpus().length),
        /** This process (workers, clients) as a share of one core: near 1, it is a bottleneck itself. */
        benchCoreShare: delta('bench') / (seconds * 1_000),
      },
      database: {
        poolSize: POOL_SIZE,
        ...activity,
        notifications,
        notifiedEvents,
        eventRows: Number(after?.rows ?? 0),
        writeTransactions: Number(after?.xid ?? 0) - Number(before?.xid ?? 0) - 1,
        transactions: Number(after?.xacts ?? 0) - Number(before?.xacts ?? 0),
        walBytes: Number(after?.wal ?? 0),
      },
      logged: servers.map((server) => ({ instance: server.name, ...server.logged, first: [...server.logged.first] })),
    };
  } finally {
    await cleanUp();
  }
}

type Curve = Array<{ sessions: number; p99Ms: number }>;
type Sustained = { sessions: number; bound: 'interpolated' | 'at least' | 'below' };

/**
 * The sessions a configuration sustains with its event p99 at most `budgetMs`: the load where its
 * measured curve (straight between measured loads) first rises above the budget; `at least` the
 * largest load when none does, `below` the smallest when the first already does.
 */
function sustainedAt(curve: Curve, budgetMs: number): Sustained {
  const points = [...curve].sort((a, b) => a.sessions - b.sessions);
  const first = points[0];
  if (first === undefined || first.p99Ms > budgetMs) return { sessions: first?.sessions ?? 0, bound: 'below' };
  for (let index = 0; index + 1 < points.length; index += 1) {
    const low = points[index] as Curve[number];
    const high = points[index + 1] as Curve[number];
    if (high.p99Ms > budgetMs) {
      const sessions =
        low.sessions + ((budgetMs - low.p99Ms) / (high.p99Ms - low.p99Ms)) * (high.sessions - low.sessions);
      return { sessions, bound: 'interpolated' };
    }
  }
  return { sessions: (points.at(-1) as Curve[number]).sessions, bound: 'at least' };
}

type Verdict = 'PASS' | 'MISS' | 'not measured';

/** For each load of one instance: the sessions `many` instances sustain at that p99, and the ratio. */
function compareCapacity(results: RunResult[], many: number) {
  // Each load's median p99 over its runs: one run's p99 is its worst 1 % of chunks, which one burst can move.
  const curveOf = (instances: number): Curve => {
    const byLoad = Map.groupBy(
      results.filter((result) => result.instances === instances),
      (result) => result.sessions,
    );
    return [...byLoad].map(([sessions, runs]) => ({
      sessions,
      p99Ms: percentile(
        runs.map((result) => result.eventLatency.p99Ms),
        0.5,
      ),
    }));
  };
  return curveOf(1).map(({ sessions, p99Ms }) => {
    const other = sustainedAt(curveOf(many), p99Ms);
    const ratio = other.sessions / sessions;
    let verdict: Verdict;
    if (other.bound === 'interpolated') verdict = ratio >= TARGETS.sessionsRatio ? 'PASS' : 'MISS';
    else if (other.bound === 'at least') verdict = ratio >= TARGETS.sessionsRatio ? 'PASS' : 'not measured';
    else verdict = ratio <= TARGETS.sessionsRatio ? 'MISS' : 'not measured';
    return { oneInstance: { sessions, p99Ms }, instances: many, sustained: other, ratio, verdict };
  });
}

/** Columns padded to their widest cell: the first left-aligned, the others right-aligned. */
function toTable(rows: string[][]): string[] {
  const widths = rows[0]?.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? '').length))) ?? [];
  return rows.map((row) =>
    row
      .map((cell, column) => (column === 0 ? cell.padEnd(widths[column] ?? 0) : cell.padStart(widths[column] ?? 0)))
      .join('  ')
      .trimEnd(),
  );
}

function failuresOf(result: RunResult): string[] {
  const failures = Object.entries(result.turns.failed).map(([reason, count]) => `${count} ${reason}`);
  if (result.turns.neverEnded > 0) failures.push(`${result.turns.neverEnded} never ended`);
  return failures;
}

function report(results: RunResult[], comparisons: ReturnType<typeof compareCapacity>, cores: number): string {
  const ms = (value: number) => (Number.isNaN(value) ? '—' : value >= 100 ? `${Math.round(value)}` : value.toFixed(1));
  const pair = (figure: { p50Ms: number; p99Ms: number }) => `${ms(figure.p50Ms)} / ${ms(figure.p99Ms)}`;
  const percent = (value: number) => (Number.isNaN(value) ? '—' : `${Math.round(value * 100)} %`);
  const label = (result: RunResult) =>
    `${result.instances} × ${result.sessions}${REPEAT > 1 ? ` (run ${result.run})` : ''}`;
  const lines = [
    '',
    `Cluster benchmark — Node ${process.version}, ${cores} cores, PostgreSQL with ${FAST_COMMITS ? 'commits NOT waiting for the disk (--fast-commits)' : 'durable commits'}`,
    `${WORKERS} workers and ${CLIENTS} clients round-robin over the instances; every session prompted at once, each answer ${CHUNKS} chunks every ${INTERVAL_MS} ms`,
    INSTANCE_CPU === undefined
      ? 'each instance may use any core'
      : `each instance confined to ${INSTANCE_CPU} of a core (a CFS quota): N instances have N × ${INSTANCE_CPU} cores`,
    '',
    ...toTable([
      [
        'instances × sessions',
        'event p50 / p99 ms',
        'read here',
        'read elsewhere',
        'prompt→1st event',
        'prompt→1st text',
        'turns/s',
        'failed',
      ],
      ...results.map((result) => [
        label(result),
        pair(result.eventLatency),
        pair(result.eventLatencyReadHere),
        pair(result.eventLatencyReadElsewhere),
        pair(result.promptToFirstEvent),
        pair(result.promptToFirstDelta),
        result.turns.perSecond.toFixed(0),
        String(Object.values(result.turns.failed).reduce((sum, count) => sum + count, result.turns.neverEnded)),
      ]),
    ]),
    '',
    ...toTable([
      [
        'instances × sessions',
        'run s',
        'CPU ms: instances',
        'PostgreSQL',
        'DB share',
        'fake LLM',
        'bench',
        'machine busy',
        'NOTIFYs',
        'events each',
        'write xacts/turn',
        'all xacts/turn',
        'active conns',
        'top waits',
      ],
      ...results.map((result) => [
        label(result),
        result.seconds.toFixed(1),
        `${result.cpu.instancesMs} (${result.cpu.perInstanceMs.join('/')})`,
        String(result.cpu.postgresMs),
        percent(result.cpu.databaseShare),
        String(result.cpu.llmMs),
        String(result.cpu.benchMs),
        percent(result.cpu.machineBusy),
        String(result.database.notifications),
        (result.database.notifiedEvents / Math.max(1, result.database.notifications)).toFixed(0),
        (result.database.writeTransactions / result.sessions).toFixed(1),
        (result.database.transactions / result.sessions).toFixed(1),
        `${result.database.meanActiveConnections.toFixed(1)} of ${result.instances * POOL_SIZE}`,
        result.database.waits.map((wait) => `${wait.wait} ${percent(wait.share)}`).join(', ') || 'none seen',
      ]),
    ]),
    '',
  ];
  for (const result of results) {
    const notes = [
      `${result.chunks} chunks as ${result.events} events`,
      `${percent(result.crossInstanceShare)} of sessions read on another instance`,
      `${percent(result.database.leasesWithTheirWorker)} of leases seen held where the worker is`,
      `bench process ${percent(result.cpu.benchCoreShare)} of a core`,
      `WAL ${(result.database.walBytes / 1_048_576).toFixed(1)} MiB`,
    ];
    const failures = failuresOf(result);
    if (failures.length > 0) notes.push(`FAILED: ${failures.join(', ')}`);
    if (result.turns.refusedPrompts.length > 0) notes.push(`refused: ${result.turns.refusedPrompts.join('; ')}`);
    for (const entry of result.logged) {
      if (entry.warnings + entry.errors === 0) continue;
      notes.push(
        `${entry.instance} logged ${entry.errors} errors, ${entry.warnings} warnings: ${entry.first.join(' | ')}`,
      );
    }
    lines.push(`${label(result)}: ${notes.join('; ')}`);
  }
  lines.push('');
  for (const comparison of comparisons) {
    const { sustained } = comparison;
    const bound = sustained.bound === 'interpolated' ? '' : sustained.bound === 'at least' ? '≥ ' : '< ';
    lines.push(
      `at 1 instance's ${REPEAT > 1 ? `median p99 of ${REPEAT} runs` : 'p99'} with ${comparison.oneInstance.sessions} sessions (${ms(comparison.oneInstance.p99Ms)} ms), ${comparison.instances} instances sustain ${bound}${Math.round(sustained.sessions)} sessions: ${bound}${comparison.ratio.toFixed(2)}× (target ≥ ${TARGETS.sessionsRatio}×)  ${comparison.verdict}`,
    );
  }
  const atThousand = results.filter((result) => result.sessions === 1_000);
  for (const result of atThousand) {
    lines.push(
      `event p99 at 1,000 sessions, ${result.instances} instance(s): ${ms(result.eventLatency.p99Ms)} ms (target < ${TARGETS.p99AtThousandMs} ms)  ${result.eventLatency.p99Ms < TARGETS.p99AtThousandMs ? 'PASS' : 'MISS'}`,
    );
  }
  if (atThousand.length === 0) {
    lines.push(`event p99 at 1,000 sessions: not measured in this run (target < ${TARGETS.p99AtThousandMs} ms)`);
  }
  lines.push(`PostgreSQL append p99 ≤ ${TARGETS.postgresAppendP99Ms} ms: database-bench.ts measures it`);
  if (INSTANCE_CPU !== undefined) {
    lines.push(
      '',
      `Each instance had ${INSTANCE_CPU} of a core of its own: the ratio is what more instances add when each brings its own CPU,`,
      'as on a machine with a core per instance, scaled down (the loads too). PostgreSQL, the fake LLM and the clients',
      'share what is left of the machine.',
    );
  } else if (cores < Math.max(...INSTANCE_COUNTS) + 1) {
    lines.push(
      '',
      `This machine has ${cores} cores for the instances, PostgreSQL, the fake LLM and the clients together: more instances`,
      'share the cores one instance had, so they cannot add capacity here. The ratio says what spreading the work',
      'over instances costs or gains on the same cores; scaling needs a core (or a machine) per instance to show.',
    );
  }
  lines.push('');
  return lines.join('\n');
}

async function main(): Promise<number> {
  if (flags.role === 'llm') {
    await runLlm();
    return 0;
  }
  if (flags.role === 'server') {
    await runServer();
    return 0;
  }
  if (findPostgresPrograms() === undefined) {
    process.stdout.write('cluster: skipped (PostgreSQL is not installed: apt-get install postgresql)\n');
    return 0;
  }
  const running = new Set<() => Promise<void>>();
  let cluster: PostgresCluster | undefined;
  const root = await mkdtemp(join(tmpdir(), 'molf-cluster-bench-'));
  const stopAll = async () => {
    for (const stop of running) await stop().catch(() => {});
    running.clear();
    await cluster?.close();
    await rm(root, { recursive: true, force: true });
  };
  const onSignal = (signal: NodeJS.Signals) => {
    progress(`cluster benchmark: ${signal}, stopping every process it started…`);
    void stopAll().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    progress(
      `starting a PostgreSQL cluster${FAST_COMMITS ? ' (commits not waiting for the disk)' : ' (durable commits)'}…`,
    );
    // Room for 3 instances' pools and listeners, and this bench's.
    cluster = await startPostgresCluster({ durable: !FAST_COMMITS, maxConnections: 100 });
    const postmaster = findPostmaster(cluster.port);
    const results: RunResult[] = [];
    for (const sessions of LOADS) {
      for (let run = 1; run <= REPEAT; run += 1) {
        for (const instances of INSTANCE_COUNTS) {
          let stop: (() => Promise<void>) | undefined;
          try {
            results.push(
              await runConfiguration({
                cluster,
                postmaster,
                root,
                instances,
                sessions,
                run,
                track: (cleanUp) => {
                  stop = cleanUp;
                  running.add(cleanUp);
                },
              }),
            );
          } finally {
            if (stop !== undefined) running.delete(stop);
          }
        }
      }
    }
    const many = Math.max(...INSTANCE_COUNTS);
    const comparisons = INSTANCE_COUNTS.includes(1) && many > 1 ? compareCapacity(results, many) : [];
    const cores = cpus().length;
    if (flags.json) {
      process.stdout.write(
        `${JSON.stringify({ cores, instanceCpu: INSTANCE_CPU ?? null, chunks: CHUNKS, intervalMs: INTERVAL_MS, workers: WORKERS, clients: CLIENTS, results, comparisons, targets: TARGETS }, null, 2)}\n`,
      );
    } else {
      process.stdout.write(report(results, comparisons, cores));
    }
    const failed = results.filter(
      (result) =>
        result.turns.neverEnded > 0 ||
        Object.keys(result.turns.failed).length > 0 ||
        result.turns.completed < result.sessions,
    );
    if (failed.length > 0) {
      progress(
        `cluster benchmark: turns failed or never ended in ${failed.map((result) => `${result.instances} × ${result.sessions}`).join(', ')}`,
      );
      return 1;
    }
    return 0;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await stopAll();
  }
}

main().then(
  (code) => {
    // The roles keep running until their parent disconnects.
    if (flags.role === undefined) process.exit(code);
  },
  (error: unknown) => {
    process.stderr.write(`cluster benchmark FAILED: ${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  },
);

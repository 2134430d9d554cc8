/**
 * Start-up benchmark: what a person waits for when starting `molf`, and what each Molf process holds
 * once started, each beside plain Node measured in the same run.
 *
 *   short runs     `molf --version` and `molf --help`: wall time and peak RSS, taking turns with
 *                  `node -e 0` (20 runs each; 5 with --quick).
 *   registration   a `molf worker` started against a running `molf server`: from the spawn to the
 *                  server's `worker.connected` log line (stamped by the server), beside the wall time
 *                  of `node -e 0`.
 *   idle RSS       each process's resident memory (VmRSS) a settling second after it said it was
 *                  ready: `molf server` with that worker registered, the worker, and the `molf up`
 *                  supervisor; beside an idle `node` (a timer, nothing else) measured the same way.
 *                  The server and worker log to their files as by default (the rotating file stream loaded).
 *
 * The long-running part runs --rounds times (3; 1 with --quick); figures are medians. Every process
 * is started through scripts/molf, what users run, after the bundle is rebuilt if stale. Peak RSS of
 * a short run comes from /usr/bin/time (apt package `time`); without it those cells say so.
 * Goals (issue 12) are reported, not enforced: the exit code is 1 only when a run fails.
 *
 * Usage: node scripts/bench/startup-bench.ts [--quick] [--json] [--rounds N]
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { BENCH_OPTIONS } from './bench-flags.ts';

const { values: flags } = parseArgs({ options: BENCH_OPTIONS, strict: true });
const SHORT_RUNS = flags.quick ? 5 : 20;
const ROUNDS = Number(flags.rounds ?? (flags.quick ? 1 : 3));
/** How long a process is left alone after it is ready before its RSS is read. */
const SETTLE_MS = 1_000;
/** A deadline for each start, not a measurement: the machine is shared. */
const START_DEADLINE_MS = 60_000;
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const MOLF = join(ROOT, 'scripts', 'molf');
const NODE = process.execPath;
const TIME = '/usr/bin/time';
const progress = (message: string) => process.stderr.write(`${message}\n`);

/** Goals of issue 12: MB there as /proc and /usr/bin/time count them, KiB / 1024 (MiB). */
const GOALS = {
  versionWallMs: 150,
  versionRssMiB: 60,
  helpWallMs: 150,
  helpRssMiB: 60,
  workerRssMiB: 70,
  serverRssMiB: 120,
  supervisorRssMiB: 50,
  registrationMs: 400,
} as const;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return (
    sorted.length % 2 === 1 ? sorted[middle] : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2
  ) as number;
}

type ShortRun = { wallMs: number; peakMiB: number | undefined };

/** One run of `command`: wall time by this clock, peak RSS by /usr/bin/time when there is one. */
function runShort(command: string[], expect: (stdout: string) => boolean): ShortRun {
  const withTime = existsSync(TIME);
  const argv = withTime ? [TIME, '-f', 'peak-kib %M', ...command] : command;
  const started = performance.now();
  const result = spawnSync(argv[0] as string, argv.slice(1), { encoding: 'utf8', cwd: ROOT });
  const wallMs = performance.now() - started;
  if (result.status !== 0 || !expect(result.stdout)) {
    throw new Error(`${command.join(' ')} failed (exit ${result.status ?? result.signal}): ${result.stderr}`);
  }
  const peak = /peak-kib (\d+)/.exec(result.stderr)?.[1];
  return { wallMs, peakMiB: peak === undefined ? undefined : Number(peak) / 1024 };
}

/** `molf …args` and `node -e 0` in turn, `SHORT_RUNS` each after one warm-up of each. */
function measureShort(args: string[], expect: (stdout: string) => boolean): { molf: ShortRun[]; node: ShortRun[] } {
  const molf: ShortRun[] = [];
  const node: ShortRun[] = [];
  runShort([MOLF, ...args], expect);
  runShort([NODE, '-e', '0'], () => true);
  for (let run = 0; run < SHORT_RUNS; run += 1) {
    molf.push(runShort([MOLF, ...args], expect));
    node.push(runShort([NODE, '-e', '0'], () => true));
  }
  return { molf, node };
}

/** VmRSS of a running process, in MiB. */
function residentMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1]) / 1024;
}

type Started = { child: ChildProcess; output: () => string; stop: () => Promise<void> };

/** A long-running process in its own group; `stop` ends the group and waits for the exit. */
function startProcess(command: string, args: string[], options: { env: NodeJS.ProcessEnv; cwd?: string }): Started {
  const child = spawn(command, args, { env: options.env, cwd: options.cwd ?? ROOT, detached: true, stdio: 'pipe' });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    child,
    output: () => output,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        try {
          process.kill(-(child.pid as number), 'SIGTERM');
        } catch {
          // already gone
        }
        const killer = setTimeout(() => {
          try {
            process.kill(-(child.pid as number), 'SIGKILL');
          } catch {
            // already gone
          }
        }, 10_000);
        await exited;
        clearTimeout(killer);
      }
    },
  };
}

/** Resolves with the first match of `pattern` in what the process printed; fails if it exits first. */
async function waitForOutput(started: Started, pattern: RegExp, what: string): Promise<RegExpExecArray> {
  const deadline = Date.now() + START_DEADLINE_MS;
  for (;;) {
    const match = pattern.exec(started.output());
    if (match !== null) return match;
    if (started.child.exitCode !== null || started.child.signalCode !== null) {
      throw new Error(`${what} exited before it was ready:\n${started.output()}`);
    }
    if (Date.now() > deadline) throw new Error(`${what} was not ready within ${START_DEADLINE_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const settle = () => new Promise((resolve) => setTimeout(resolve, SETTLE_MS));

type Round = {
  idleNodeMiB: number;
  serverMiB: number;
  workerMiB: number;
  supervisorMiB: number;
  registrationMs: number;
};

async function measureRound(base: string): Promise<Round> {
  const dir = await mkdtemp(join(base, 'round-'));
  const workdir = join(dir, 'project');
  await mkdir(workdir);
  const tokens = {
    client: `molf_c_${randomBytes(32).toString('base64url')}`,
    worker: `molf_w_${randomBytes(32).toString('base64url')}`,
  };
  await writeFile(join(dir, 'client-token'), tokens.client, { mode: 0o600 });
  await writeFile(join(dir, 'worker-token'), tokens.worker, { mode: 0o600 });
  // Only temp dirs: no user data, no saved connections touched.
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOME: dir,
    MOLF_HOME: join(dir, 'data'),
    MOLF_CLIENT_DIR: join(dir, 'client'),
    MOLF_LOG_LEVEL: 'info',
  };
  for (const name of ['MOLF_LOG_FILE', 'MOLF_CLIENT_TOKEN', 'MOLF_WORKER_TOKEN', 'MOLF_SERVER_URL', 'NODE_OPTIONS'])
    delete env[name];
  const running: Started[] = [];
  try {
    const idle = startProcess(NODE, ['-e', 'setInterval(() => {}, 1e9); console.log("ready")'], { env });
    running.push(idle);
    await waitForOutput(idle, /ready/, 'idle node');
    await settle();
    const idleNodeMiB = residentMiB(idle.child.pid as number);
    await idle.stop();

    const server = startProcess(
      MOLF,
      [
        'server',
        '--port',
        '0',
        '--client-token-file',
        join(dir, 'client-token'),
        '--worker-token-file',
        join(dir, 'worker-token'),
      ],
      { env },
    );
    running.push(server);
    const [, url] = await waitForOutput(server, /listening on (ws:\/\/\S+)/, 'molf server');

    const spawnedAt = Date.now();
    const worker = startProcess(
      MOLF,
      ['worker', '--server', url as string, '--token-file', join(dir, 'worker-token'), '--workdir', workdir],
      { env },
    );
    running.push(worker);
    // The server stamps its log line with its own clock (Date.now, as spawnedAt): pipes add nothing.
    const [, time] = await waitForOutput(server, /"time":(\d+)[^\n]*"msg":"worker\.connected"/, 'the registration');
    const registrationMs = Number(time) - spawnedAt;
    await waitForOutput(worker, /serving /, 'molf worker');
    await settle();
    const workerMiB = residentMiB(worker.child.pid as number);
    const serverMiB = residentMiB(server.child.pid as number);
    await worker.stop();
    await server.stop();

    const up = startProcess(MOLF, ['up', '--port', '0'], { env, cwd: workdir });
    running.push(up);
    await waitForOutput(up, /Ctrl-C stops everything/, 'molf up');
    await settle();
    const supervisorMiB = residentMiB(up.child.pid as number);
    await up.stop();
    return { idleNodeMiB, serverMiB, workerMiB, supervisorMiB, registrationMs };
  } finally {
    for (const started of running.reverse()) await started.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

/** The bundle users run, built if an edit made it stale (else scripts/molf would run the sources). */
function ensureFreshBundle(): void {
  const result = spawnSync(NODE, [join(ROOT, 'scripts', 'build-cli.ts'), '--if-stale'], { stdio: 'inherit' });
  if (result.status !== 0) throw new Error('building the CLI bundle failed');
}

function verdict(value: number | undefined, goal: number): string {
  if (value === undefined) return 'not measured';
  return value < goal ? 'PASS' : 'MISS';
}

async function main(): Promise<void> {
  ensureFreshBundle();
  if (!existsSync(TIME))
    progress(`startup bench: ${TIME} not found (apt-get install time): peak RSS of short runs not measured`);
  progress(`startup bench: molf --version and node -e 0, ${SHORT_RUNS} runs each`);
  const version = measureShort(['--version'], (stdout) => /^molf \d+\.\d+\.\d+ \(.+\)\s*$/.test(stdout));
  progress(`startup bench: molf --help and node -e 0, ${SHORT_RUNS} runs each`);
  const help = measureShort(['--help'], (stdout) => stdout.includes('Usage: molf'));
  const rounds: Round[] = [];
  const base = await mkdtemp(join(tmpdir(), 'molf-startup-bench-'));
  try {
    for (let round = 0; round < ROUNDS; round += 1) {
      progress(`startup bench: server, worker and molf up, round ${round + 1}/${ROUNDS}`);
      rounds.push(await measureRound(base));
    }
  } finally {
    await rm(base, { recursive: true, force: true });
  }

  const medianOf = (runs: ShortRun[], key: keyof ShortRun) => {
    const values = runs.map((run) => run[key]).filter((value): value is number => value !== undefined);
    return values.length === 0 ? undefined : median(values);
  };
  const of = (key: keyof Round) => median(rounds.map((round) => round[key]));
  const results = {
    node: {
      wallMs: medianOf([...version.node, ...help.node], 'wallMs'),
      peakMiB: medianOf([...version.node, ...help.node], 'peakMiB'),
      idleMiB: of('idleNodeMiB'),
    },
    version: { wallMs: medianOf(version.molf, 'wallMs'), peakMiB: medianOf(version.molf, 'peakMiB') },
    help: { wallMs: medianOf(help.molf, 'wallMs'), peakMiB: medianOf(help.molf, 'peakMiB') },
    registrationMs: of('registrationMs'),
    serverMiB: of('serverMiB'),
    workerMiB: of('workerMiB'),
    supervisorMiB: of('supervisorMiB'),
  };
  if (flags.json) {
    process.stdout.write(
      `${JSON.stringify({ goals: GOALS, results, rounds, shortRuns: { version, help } }, null, 2)}\n`,
    );
    return;
  }
  const ms = (value: number | undefined) => (value === undefined ? 'n/a' : `${value.toFixed(0)} ms`);
  const mib = (value: number | undefined) => (value === undefined ? 'n/a' : `${value.toFixed(1)} MiB`);
  /**
   * One line: our figure, the baseline's beside it with ours as a multiple of it (time) or above it
   * (memory), the goal and the verdict.
   */
  const row = (
    label: string,
    unit: 'ms' | 'MiB',
    ours: number | undefined,
    baseline: { name: string; value: number | undefined },
    goal: number,
  ): [string, string, string, string, string] => {
    const format = unit === 'ms' ? ms : mib;
    const known = ours !== undefined && baseline.value !== undefined;
    const relation = !known
      ? ''
      : unit === 'ms'
        ? `, ours ×${(ours / (baseline.value as number)).toFixed(1)}`
        : `, ours +${(ours - (baseline.value as number)).toFixed(1)}`;
    return [
      label,
      format(ours),
      `${baseline.name}: ${format(baseline.value)}${relation}`,
      `< ${goal} ${unit}`,
      verdict(ours, goal),
    ];
  };
  const { node } = results;
  const nodeStart = { name: 'node -e 0', value: node.wallMs };
  const nodePeak = { name: 'node -e 0', value: node.peakMiB };
  const idleNode = { name: 'idle node', value: node.idleMiB };
  const rows = [
    row('molf --version, wall', 'ms', results.version.wallMs, nodeStart, GOALS.versionWallMs),
    row('molf --version, peak RSS', 'MiB', results.version.peakMiB, nodePeak, GOALS.versionRssMiB),
    row('molf --help, wall', 'ms', results.help.wallMs, nodeStart, GOALS.helpWallMs),
    row('molf --help, peak RSS', 'MiB', results.help.peakMiB, nodePeak, GOALS.helpRssMiB),
    row('worker start → registered', 'ms', results.registrationMs, nodeStart, GOALS.registrationMs),
    row('idle molf worker, RSS', 'MiB', results.workerMiB, idleNode, GOALS.workerRssMiB),
    row('idle molf server (1 worker), RSS', 'MiB', results.serverMiB, idleNode, GOALS.serverRssMiB),
    row('molf up supervisor, RSS', 'MiB', results.supervisorMiB, idleNode, GOALS.supervisorRssMiB),
  ];
  const widths = [0, 1, 2, 3].map((column) => Math.max(...rows.map((row) => row[column]?.length ?? 0)));
  const lines = rows.map((row) =>
    row.map((cell, column) => (column < 4 ? cell.padEnd(widths[column] as number) : cell)).join('  '),
  );
  process.stdout.write(
    `\nStart-up (medians; ${SHORT_RUNS} short runs each, ${ROUNDS} round${ROUNDS === 1 ? '' : 's'} of the long-running processes)\n${lines.join('\n')}\n`,
  );
}

await main();

/**
 * Link benchmark: how much a Molf job round trip (server → worker → server) costs compared with
 * the transports it is built on, measured side by side in one process over loopback.
 *
 *   1. raw `ws`   — a `ws` server on 127.0.0.1 echoing each message; the client awaits the echo.
 *   2. bare tRPC  — tRPC v11 `echo` mutation served by `applyWSSHandler`, called through
 *                   `createTRPCClient` + `wsLink` + `createWSClient` (WebSocket from `ws`).
 *   3. Molf job   — `createServer` + `createWorker`; one call is
 *                   `server.dispatcher.dispatch({ toolName: 'echo', ... })`: the call goes to the
 *                   worker on its job subscription and the result comes back as a mutation.
 *   4. Molf job over TLS — the same over `wss://` (TLS 1.3, a generated EC P-256 certificate that
 *                   the worker has pinned, as a worker on another machine connects).
 *
 * Measurements, each run for every transport in turn, repeated over several rounds (transport
 * order rotates each round) because the machine is noisy; the figures are medians of the rounds:
 *   - sequential: warm-up, then one call at a time; p50 / p99 latency (µs) and calls/s;
 *   - pipelined: 100 calls kept outstanding; calls/s;
 *   - large (bare tRPC and Molf): 1 MiB results, 50 in flight; MiB/s of results. Every result's
 *     length is checked.
 *
 * Usage: node scripts/bench/link-bench.ts [--quick] [--json] [--rounds N]
 *   --quick   counts / 10 (about 7 s; with `--rounds 1` about 3 s)
 *   --rounds  how many interleaved rounds (default 3)
 *   --json    print the results as JSON instead of the table (progress still goes to stderr)
 *
 * Targets (reported, not enforced): Molf p50 ≤ 1.3 × bare tRPC p50, Molf pipelined throughput
 * ≥ 50 % of bare tRPC's; over TLS, p50 ≤ 1.15 × plain Molf p50 and 1 MiB throughput ≥ plain's / 1.15. Exit code 1 only when a call fails or returns the wrong thing.
 */

import { X509Certificate } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { arch, cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createServer, generateCertificate, type MolfServer } from '@molf/server';
import { createWorker, type MolfWorker } from '@molf/worker';
import { createTRPCClient, createWSClient, wsLink } from '@trpc/client';
import { initTRPC } from '@trpc/server';
import { applyWSSHandler } from '@trpc/server/adapters/ws';
import { WebSocket, WebSocketServer } from 'ws';
import { BENCH_OPTIONS } from './bench-flags.ts';

// ---------------------------------------------------------------------------------------------
// Options

const { values: flags } = parseArgs({ options: BENCH_OPTIONS, strict: true });

const rounds = Number(flags.rounds ?? 3);
if (!Number.isInteger(rounds) || rounds < 1) {
  throw new Error(`--rounds must be a positive integer, got ${flags.rounds}`);
}
const scale = flags.quick ? 10 : 1;

const config = {
  rounds,
  warmupCalls: 300 / scale,
  sequentialCalls: 2_000 / scale,
  pipelinedInFlight: 100,
  pipelinedWarmupCalls: 1_000 / scale,
  pipelinedCalls: 5_000 / scale,
  largeBytes: 1024 * 1024,
  largeInFlight: 50,
  largeCalls: Math.max(50, 200 / scale),
  largeWarmupCalls: Math.ceil(10 / scale),
};

const TARGET_P50_RATIO = 1.3;
const TARGET_THROUGHPUT_RATIO = 0.5;
/** TLS against plain Molf: at most this much slower, in p50 latency and in 1 MiB throughput. */
const TARGET_TLS_RATIO = 1.15;

const SMALL_TEXT = 'x';
const LARGE_TEXT = 'a'.repeat(config.largeBytes);

function progress(message: string): void {
  process.stderr.write(`${message}\n`);
}

// ---------------------------------------------------------------------------------------------
// Transports

type Transport = {
  name: string;
  /** One small round trip; throws if the reply is wrong. */
  call(): Promise<void>;
  /** One round trip returning `config.largeBytes` characters; throws if the reply is wrong. */
  callLarge?: () => Promise<void>;
  close(): Promise<void>;
};

function fail(transport: string, message: string): never {
  throw new Error(`${transport}: ${message}`);
}

function closeWss(wss: WebSocketServer): Promise<void> {
  for (const client of wss.clients) client.terminate();
  return new Promise((resolve, reject) => wss.close((error) => (error ? reject(error) : resolve())));
}

function listening(wss: WebSocketServer): Promise<number> {
  return new Promise((resolve, reject) => {
    wss.once('error', reject);
    wss.once('listening', () => {
      wss.off('error', reject);
      resolve((wss.address() as AddressInfo).port);
    });
  });
}

/** A `ws` server echoing every message, and one client that matches replies in FIFO order. */
async function startRawWs(): Promise<Transport> {
  const name = 'raw ws';
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  wss.on('connection', (socket) => {
    socket.on('message', (data, isBinary) => socket.send(data, { binary: isBinary }));
  });
  const port = await listening(wss);

  const socket = new WebSocket(`ws://127.0.0.1:${port}`);
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });

  // The server answers in order, so the oldest waiting call owns the next reply.
  const waiting: { id: number; resolve: () => void; reject: (error: Error) => void }[] = [];
  let nextId = 0;
  socket.on('message', (data) => {
    const entry = waiting.shift();
    if (entry === undefined) return;
    const reply = JSON.parse(String(data)) as { id: number; text: string };
    if (reply.id !== entry.id || reply.text !== SMALL_TEXT) {
      entry.reject(new Error(`${name}: wrong echo ${String(data)}`));
    } else {
      entry.resolve();
    }
  });
  socket.on('error', (error) => {
    for (const entry of waiting.splice(0)) entry.reject(error);
  });

  return {
    name,
    call() {
      const id = nextId++;
      return new Promise<void>((resolve, reject) => {
        waiting.push({ id, resolve, reject });
        socket.send(JSON.stringify({ id, text: SMALL_TEXT }));
      });
    },
    async close() {
      await new Promise<void>((resolve) => {
        socket.once('close', () => resolve());
        socket.close();
      });
      await closeWss(wss);
    },
  };
}

/** tRPC v11 over `ws`: one `echo` mutation, no middleware, no auth. */
async function startBareTrpc(): Promise<Transport> {
  const name = 'bare tRPC';
  const t = initTRPC.create();
  const appRouter = t.router({
    echo: t.procedure
      .input((value: unknown) => {
        const text = (value as { text?: unknown } | null)?.text;
        if (typeof text !== 'string') throw new Error('text must be a string');
        return { text };
      })
      .mutation(({ input }) => ({ text: input.text })),
  });
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  const port = await listening(wss);
  const handler = applyWSSHandler({ wss, router: appRouter });

  const wsClient = createWSClient({
    url: `ws://127.0.0.1:${port}`,
    WebSocket: WebSocket as unknown as typeof globalThis.WebSocket,
  });
  const client = createTRPCClient<typeof appRouter>({ links: [wsLink({ client: wsClient })] });

  async function echo(text: string): Promise<void> {
    const reply = await client.echo.mutate({ text });
    if (reply.text.length !== text.length || reply.text !== text) {
      fail(name, `wrong echo: ${reply.text.length} characters, expected ${text.length}`);
    }
  }

  return {
    name,
    call: () => echo(SMALL_TEXT),
    callLarge: () => echo(LARGE_TEXT),
    async close() {
      await wsClient.close();
      handler.broadcastReconnectNotification();
      await closeWss(wss);
    },
  };
}

function randomToken(prefix: string): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
  let token = prefix;
  for (let i = 0; i < 32; i += 1) token += alphabet[Math.floor(Math.random() * alphabet.length)];
  return token;
}

/** The real server and worker; one call is a dispatched `echo` job. Over TLS with `tls`. */
async function startMolf(options: { tls?: boolean } = {}): Promise<Transport> {
  const name = options.tls === true ? 'Molf job over TLS' : 'Molf job';
  const dataDir = await mkdtemp(join(tmpdir(), 'molf-bench-data-'));
  const workdir = await mkdtemp(join(tmpdir(), 'molf-bench-work-'));
  const tokens = { client: randomToken('molf_c_'), worker: randomToken('molf_w_') };
  let server: MolfServer | undefined;
  let worker: MolfWorker | undefined;

  async function close(): Promise<void> {
    try {
      await worker?.close();
      await server?.close();
    } finally {
      await rm(dataDir, { recursive: true, force: true });
      await rm(workdir, { recursive: true, force: true });
    }
  }

  try {
    const certificate = options.tls === true ? await generateCertificate({ names: ['127.0.0.1'] }) : undefined;
    server = await createServer({
      port: 0,
      dataDir,
      tokens,
      ...(certificate === undefined ? {} : { tls: certificate }),
    });
    worker = await createWorker({
      serverUrl: server.url,
      token: tokens.worker,
      workdir,
      ...(certificate === undefined
        ? {}
        : {
            trust: {
              type: 'pinned' as const,
              fingerprint256: new X509Certificate(certificate.cert).fingerprint256,
              cert: certificate.cert,
            },
          }),
    });
    await worker.registered;
  } catch (error) {
    await close();
    throw error;
  }
  const { dispatcher } = server;
  const { workerId } = worker;

  async function echo(text: string): Promise<void> {
    const result = await dispatcher.dispatch({ workerId, toolName: 'echo', args: { text }, timeoutMs: 10_000 });
    if (result.error !== undefined) fail(name, `the job failed: ${result.error}`);
    if (result.output.length !== text.length || result.output !== text) {
      fail(name, `wrong output: ${result.output.length} characters, expected ${text.length}`);
    }
  }

  return { name, call: () => echo(SMALL_TEXT), callLarge: () => echo(LARGE_TEXT), close };
}

// ---------------------------------------------------------------------------------------------
// Measurements

function now(): bigint {
  return process.hrtime.bigint();
}

function microsSince(start: bigint): number {
  return Number(now() - start) / 1_000;
}

/** Nearest-rank percentile of an ascending array. */
function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] as number;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

type SequentialResult = { p50Us: number; p99Us: number; meanUs: number; callsPerSec: number };

async function measureSequential(call: () => Promise<void>): Promise<SequentialResult> {
  for (let i = 0; i < config.warmupCalls; i += 1) await call();
  const samples = new Array<number>(config.sequentialCalls);
  const started = now();
  for (let i = 0; i < config.sequentialCalls; i += 1) {
    const start = now();
    await call();
    samples[i] = microsSince(start);
  }
  const totalUs = microsSince(started);
  samples.sort((a, b) => a - b);
  return {
    p50Us: percentile(samples, 50),
    p99Us: percentile(samples, 99),
    meanUs: samples.reduce((sum, value) => sum + value, 0) / samples.length,
    callsPerSec: config.sequentialCalls / (totalUs / 1e6),
  };
}

/** Keeps `inFlight` calls outstanding until `total` have completed; returns the elapsed µs. */
async function runPipelined(call: () => Promise<void>, total: number, inFlight: number): Promise<number> {
  let issued = 0;
  const lane = async () => {
    while (issued < total) {
      issued += 1;
      await call();
    }
  };
  const started = now();
  await Promise.all(Array.from({ length: Math.min(inFlight, total) }, lane));
  return microsSince(started);
}

type PipelinedResult = { callsPerSec: number };

async function measurePipelined(call: () => Promise<void>): Promise<PipelinedResult> {
  await runPipelined(call, config.pipelinedWarmupCalls, config.pipelinedInFlight);
  const elapsedUs = await runPipelined(call, config.pipelinedCalls, config.pipelinedInFlight);
  return { callsPerSec: config.pipelinedCalls / (elapsedUs / 1e6) };
}

type LargeResult = { mibPerSec: number; callsPerSec: number };

async function measureLarge(call: () => Promise<void>): Promise<LargeResult> {
  await runPipelined(call, config.largeWarmupCalls, config.largeInFlight);
  const elapsedUs = await runPipelined(call, config.largeCalls, config.largeInFlight);
  const seconds = elapsedUs / 1e6;
  return {
    mibPerSec: (config.largeCalls * config.largeBytes) / (1024 * 1024) / seconds,
    callsPerSec: config.largeCalls / seconds,
  };
}

// ---------------------------------------------------------------------------------------------
// Run

type TransportFigures = {
  sequential: SequentialResult;
  pipelined: PipelinedResult;
  large?: LargeResult;
};

type Samples = {
  sequential: SequentialResult[];
  pipelined: PipelinedResult[];
  large: LargeResult[];
};

function medianOf<T extends Record<string, number>>(rows: readonly T[]): T {
  const first = rows[0];
  if (first === undefined) throw new Error('no samples');
  const out: Record<string, number> = {};
  for (const key of Object.keys(first)) out[key] = median(rows.map((row) => row[key] as number));
  return out as T;
}

function rotate<T>(items: readonly T[], by: number): T[] {
  const shift = by % items.length;
  return [...items.slice(shift), ...items.slice(0, shift)];
}

async function runBench(
  transports: Transport[],
): Promise<{ figures: Map<string, TransportFigures>; samples: Map<string, Samples> }> {
  const samples = new Map<string, Samples>(
    transports.map((transport) => [transport.name, { sequential: [], pipelined: [], large: [] }]),
  );
  const get = (name: string) => samples.get(name) as Samples;

  for (let round = 0; round < config.rounds; round += 1) {
    const order = rotate(transports, round);
    for (const transport of order) {
      progress(`round ${round + 1}/${config.rounds}: sequential ${transport.name}`);
      get(transport.name).sequential.push(await measureSequential(transport.call));
    }
    for (const transport of order) {
      progress(`round ${round + 1}/${config.rounds}: pipelined ${transport.name}`);
      get(transport.name).pipelined.push(await measurePipelined(transport.call));
    }
    for (const transport of order) {
      if (transport.callLarge === undefined) continue;
      progress(`round ${round + 1}/${config.rounds}: 1 MiB ${transport.name}`);
      get(transport.name).large.push(await measureLarge(transport.callLarge));
    }
  }

  const figures = new Map<string, TransportFigures>();
  for (const [name, rows] of samples) {
    figures.set(name, {
      sequential: medianOf(rows.sequential),
      pipelined: medianOf(rows.pipelined),
      ...(rows.large.length === 0 ? {} : { large: medianOf(rows.large) }),
    });
  }
  return { figures, samples };
}

// ---------------------------------------------------------------------------------------------
// Report

type Report = {
  node: string;
  cpus: number;
  cpuModel: string;
  arch: string;
  config: typeof config;
  transports: Record<string, TransportFigures>;
  /** Every round's figures, in round order (the table shows their medians). */
  rounds: Record<string, Samples>;
  ratios: {
    p50MolfOverTrpc: number;
    p50Target: number;
    p50Pass: boolean;
    pipelinedMolfOverTrpc: number;
    pipelinedTarget: number;
    pipelinedPass: boolean;
    largeMolfOverTrpc: number | null;
    p50TlsOverPlain: number;
    largePlainOverTls: number | null;
    tlsTarget: number;
    tlsP50Pass: boolean;
    tlsLargePass: boolean | null;
  };
};

function buildReport({
  figures,
  samples,
}: {
  figures: Map<string, TransportFigures>;
  samples: Map<string, Samples>;
}): Report {
  const trpc = figures.get('bare tRPC') as TransportFigures;
  const molf = figures.get('Molf job') as TransportFigures;
  const tls = figures.get('Molf job over TLS') as TransportFigures;
  const p50Ratio = molf.sequential.p50Us / trpc.sequential.p50Us;
  const tlsP50Ratio = tls.sequential.p50Us / molf.sequential.p50Us;
  const tlsLargeRatio =
    molf.large !== undefined && tls.large !== undefined ? molf.large.mibPerSec / tls.large.mibPerSec : null;
  const pipelinedRatio = molf.pipelined.callsPerSec / trpc.pipelined.callsPerSec;
  return {
    node: process.version,
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? 'unknown',
    arch: arch(),
    config,
    transports: Object.fromEntries(figures),
    rounds: Object.fromEntries(samples),
    ratios: {
      p50MolfOverTrpc: p50Ratio,
      p50Target: TARGET_P50_RATIO,
      p50Pass: p50Ratio <= TARGET_P50_RATIO,
      pipelinedMolfOverTrpc: pipelinedRatio,
      pipelinedTarget: TARGET_THROUGHPUT_RATIO,
      pipelinedPass: pipelinedRatio >= TARGET_THROUGHPUT_RATIO,
      largeMolfOverTrpc:
        molf.large !== undefined && trpc.large !== undefined ? molf.large.mibPerSec / trpc.large.mibPerSec : null,
      p50TlsOverPlain: tlsP50Ratio,
      largePlainOverTls: tlsLargeRatio,
      tlsTarget: TARGET_TLS_RATIO,
      tlsP50Pass: tlsP50Ratio <= TARGET_TLS_RATIO,
      tlsLargePass: tlsLargeRatio === null ? null : tlsLargeRatio <= TARGET_TLS_RATIO,
    },
  };
}

function formatInt(value: number): string {
  return Math.round(value).toLocaleString('en-US');
}

function printTable(report: Report): void {
  const header = ['transport', 'p50 µs', 'p99 µs', 'seq calls/s', 'pipelined calls/s', '1 MiB: MiB/s'];
  const rows = Object.entries(report.transports).map(([name, figures]) => [
    name,
    formatInt(figures.sequential.p50Us),
    formatInt(figures.sequential.p99Us),
    formatInt(figures.sequential.callsPerSec),
    formatInt(figures.pipelined.callsPerSec),
    figures.large === undefined ? '—' : figures.large.mibPerSec.toFixed(1),
  ]);
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  const line = (cells: string[]) =>
    cells
      .map((cell, column) => (column === 0 ? cell.padEnd(widths[0] ?? 0) : cell.padStart(widths[column] ?? 0)))
      .join('  ');

  const { ratios } = report;
  const verdict = (pass: boolean) => (pass ? 'PASS' : 'FAIL');
  const out = [
    '',
    `Link benchmark — Node ${report.node}, ${report.cpus} × ${report.cpuModel} (${report.arch}), loopback`,
    `${config.rounds} round${config.rounds === 1 ? '' : 's'}, median of round medians; sequential: ${config.warmupCalls} warm-up + ${config.sequentialCalls} calls; ` +
      `pipelined: ${config.pipelinedCalls} calls, ${config.pipelinedInFlight} in flight; ` +
      `1 MiB: ${config.largeCalls} calls, ${config.largeInFlight} in flight`,
    '',
    line(header),
    line(widths.map((width) => '-'.repeat(width))),
    ...rows.map(line),
    '',
    `Molf p50 / bare tRPC p50:                      ${ratios.p50MolfOverTrpc.toFixed(2)}×  (target ≤ ${ratios.p50Target}×)  ${verdict(ratios.p50Pass)}`,
    `Molf pipelined / bare tRPC pipelined:          ${(ratios.pipelinedMolfOverTrpc * 100).toFixed(0)} %  (target ≥ ${ratios.pipelinedTarget * 100} %)  ${verdict(ratios.pipelinedPass)}`,
    ...(ratios.largeMolfOverTrpc === null
      ? []
      : [`Molf 1 MiB / bare tRPC 1 MiB (no target):      ${(ratios.largeMolfOverTrpc * 100).toFixed(0)} %`]),
    `Molf TLS p50 / Molf plain p50:                 ${ratios.p50TlsOverPlain.toFixed(2)}×  (target ≤ ${ratios.tlsTarget}×)  ${verdict(ratios.tlsP50Pass)}`,
    ...(ratios.largePlainOverTls === null || ratios.tlsLargePass === null
      ? []
      : [
          `Molf plain 1 MiB / Molf TLS 1 MiB:             ${ratios.largePlainOverTls.toFixed(2)}×  (target ≤ ${ratios.tlsTarget}×)  ${verdict(ratios.tlsLargePass)}`,
        ]),
    '',
  ];
  process.stdout.write(out.join('\n'));
}

// ---------------------------------------------------------------------------------------------
// Main

async function main(): Promise<void> {
  const transports: Transport[] = [];
  let failure: unknown;
  try {
    progress('starting transports');
    transports.push(await startRawWs(), await startBareTrpc(), await startMolf(), await startMolf({ tls: true }));
    const report = buildReport(await runBench(transports));
    if (flags.json) {
      process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    } else {
      printTable(report);
    }
  } catch (error) {
    failure = error;
  }

  for (const transport of transports.reverse()) {
    try {
      await transport.close();
    } catch (error) {
      failure ??= error;
    }
  }

  if (failure !== undefined) {
    progress(
      `link benchmark FAILED: ${failure instanceof Error ? (failure.stack ?? failure.message) : String(failure)}`,
    );
    // Something may still hold the event loop after a failure; don't wait for it.
    process.exit(1);
  }
}

await main();

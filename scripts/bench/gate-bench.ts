/**
 * Gate benchmark: what the approval gate adds to a file tool call. A real server and worker over
 * loopback; the rules allow read_file. Measured in one run, the three calls interleaved sample by
 * sample (so a noisy machine slows all three alike), medians:
 *
 *   read_file, ungated — `dispatcher.dispatch` of read_file on a small file: the call itself;
 *   path check         — a `paths/resolve` request for that path: the link round trip the gate made
 *                        before every file tool call until it was folded into the call (an allowed
 *                        call now runs with its predicted path pinned; the worker refuses it if a link
 *                        leads elsewhere, and only then is the worker asked);
 *   read_file, gated   — `toolCalls.run`: the rules, the audit record, then the call, as the agent runs it.
 *
 * Goal: no path check round trip in an allowed file tool call (gated − ungated well under a path check).
 *
 * Usage: node scripts/bench/gate-bench.ts [--quick] [--json] [--rounds N]
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { WorkerId } from '@molf/protocol';
import { createServer, type MolfServer } from '@molf/server';
import { createWorker, type MolfWorker } from '@molf/worker';
import { BENCH_OPTIONS } from './bench-flags.ts';

const { values: flags } = parseArgs({ options: BENCH_OPTIONS, strict: true });
const SAMPLES = flags.quick ? 300 : 3_000;
const TOKENS = { client: 'molf_c_bench-client-token-0123456789', worker: 'molf_w_bench-worker-token-0123456789' };

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

async function measure(server: MolfServer, workerId: WorkerId) {
  const readUngated = async () => {
    const result = await server.dispatcher.dispatch({ workerId, toolName: 'read_file', args: { path: 'notes.txt' } });
    if (result.error !== undefined) throw new Error(`read_file failed: ${result.error}`);
  };
  const pathCheck = async () => {
    const outcome = await server.dispatcher.request({
      workerId,
      request: { method: 'paths/resolve', params: { paths: ['notes.txt'] } },
      timeoutMs: 10_000,
    });
    if (!outcome.ok) throw new Error(`the path check failed: ${outcome.message}`);
  };
  const readGated = async () => {
    const result = await server.toolCalls.run({
      sessionId: 'bench',
      workerId,
      tool: 'read_file',
      args: { path: 'notes.txt' },
    });
    if (result.error !== undefined) throw new Error(`the gated read_file failed: ${result.error}`);
  };
  const calls = { readUngated, pathCheck, readGated };
  const samples: Record<keyof typeof calls, number[]> = { readUngated: [], pathCheck: [], readGated: [] };
  for (let index = 0; index < SAMPLES / 10; index += 1) {
    for (const call of Object.values(calls)) await call();
  }
  for (let index = 0; index < SAMPLES; index += 1) {
    for (const [name, call] of Object.entries(calls) as Array<[keyof typeof calls, () => Promise<void>]>) {
      const started = performance.now();
      await call();
      samples[name].push((performance.now() - started) * 1_000);
    }
  }
  const readUs = median(samples.readUngated);
  const checkUs = median(samples.pathCheck);
  const gatedUs = median(samples.readGated);
  return {
    samples: SAMPLES,
    readUngatedP50Us: readUs,
    pathCheckP50Us: checkUs,
    readGatedP50Us: gatedUs,
    pathCheckShare: checkUs / readUs,
    gateShare: (gatedUs - readUs) / readUs,
  };
}

async function main(): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), 'molf-gate-bench-data-'));
  const workdir = await mkdtemp(join(tmpdir(), 'molf-gate-bench-work-'));
  let server: MolfServer | undefined;
  let worker: MolfWorker | undefined;
  try {
    await writeFile(join(workdir, 'notes.txt'), 'a short file\n'.repeat(20));
    server = await createServer({ port: 0, dataDir, tokens: TOKENS });
    worker = await createWorker({ serverUrl: server.url, token: TOKENS.worker, workdir });
    await worker.registered;
    await server.permissions.writeText(worker.workerId, '{ "read_file": "allow" }');
    const result = await measure(server, worker.workerId);
    if (flags.json) {
      process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
      return;
    }
    const us = (value: number) => `${value.toFixed(0)} µs`;
    const percent = (value: number) => `${(value * 100).toFixed(1)} %`;
    process.stdout.write(
      [
        '',
        `Gate benchmark — Node ${process.version}, ${result.samples} samples each, interleaved`,
        '',
        `read_file, ungated (the call itself)      p50 ${us(result.readUngatedP50Us)}`,
        `path check (paths/resolve round trip)     p50 ${us(result.pathCheckP50Us)}  = ${percent(result.pathCheckShare)} of a read_file call, no longer made for an allowed file tool call`,
        `read_file, gated (rules, audit, call)     p50 ${us(result.readGatedP50Us)}  (+${percent(result.gateShare)}; goal: less than a path check)  ${result.readGatedP50Us - result.readUngatedP50Us < result.pathCheckP50Us ? 'PASS' : 'FAIL'}`,
        '',
      ].join('\n'),
    );
  } finally {
    await worker?.close();
    await server?.close();
    await rm(dataDir, { recursive: true, force: true });
    await rm(workdir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`gate benchmark FAILED: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});

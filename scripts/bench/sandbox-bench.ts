/**
 * Sandbox benchmark: `shell_exec` of `true` through the tool handler, as a worker runs it, without
 * and with the bubblewrap sandbox (mounts planned at every spawn, as in the worker). Reports p50
 * and p99 of each, the p50 ratio and the time the sandbox adds. Target (reported, not enforced):
 * at most 10 ms added at p50.
 *
 * Usage: node scripts/bench/sandbox-bench.ts [--quick] [--json] [--rounds N]
 *   --quick   40 calls per side and round; the full run makes 300. Rounds: 3 (1 with --quick).
 * Without a working bwrap it says why and exits 0 (nothing to measure).
 */
import { mkdtemp, readFile, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createSilentLogger } from '@molf/logging';
import type { ToolCallId } from '@molf/protocol';
import { createPathPolicy, createReadTracker, prepareSandbox, type SandboxRunner, shellExecTool } from '@molf/worker';
import { BENCH_OPTIONS } from './bench-flags.ts';
import { percentile } from './bench-stats.ts';

const { values: flags } = parseArgs({ options: BENCH_OPTIONS, strict: true });
const calls = flags.quick ? 40 : 300;
const rounds = Number(flags.rounds ?? (flags.quick ? 1 : 3));
const TARGET_ADDED_MS = 10;
const progress = (message: string) => process.stderr.write(`${message}\n`);

async function main(): Promise<void> {
  const workdir = await realpath(await mkdtemp(join(tmpdir(), 'molf-sandbox-bench-')));
  try {
    const prepared = await prepareSandbox({ config: { mode: 'on' }, workdir, env: process.env });
    if (prepared.runner === undefined) {
      progress(`sandbox benchmark skipped: ${prepared.status.selfTest?.failed ?? 'no sandbox'}`);
      if (flags.json) process.stdout.write(`${JSON.stringify({ skipped: prepared.status.selfTest?.failed })}\n`);
      return;
    }
    const paths = await createPathPolicy({ workdir });
    const reads = createReadTracker();
    let count = 0;
    const run = async (sandbox: SandboxRunner | undefined): Promise<number> => {
      const started = performance.now();
      const result = await shellExecTool.run(
        { command: 'true', timeout: 10_000 },
        {
          toolCallId: `bench_${count++}` as ToolCallId,
          workdir,
          paths,
          sessionId: undefined,
          reads,
          signal: new AbortController().signal,
          ...(sandbox === undefined ? {} : { sandbox }),
          logger: createSilentLogger(),
        },
      );
      const elapsed = performance.now() - started;
      if (result.error !== undefined || result.meta?.exitCode !== 0) {
        throw new Error(`shell_exec true failed: ${result.error ?? result.output}`);
      }
      return elapsed;
    };

    const sides = { plain: [] as number[], sandboxed: [] as number[] };
    const perRound: Array<{ plainP50: number; sandboxedP50: number }> = [];
    await run(undefined);
    await run(prepared.runner);
    for (let round = 0; round < rounds; round += 1) {
      progress(`sandbox bench: round ${round + 1}/${rounds}`);
      const plain: number[] = [];
      const sandboxed: number[] = [];
      // Alternate call by call, so that the machine's noise falls on both sides alike.
      for (let index = 0; index < calls; index += 1) {
        if (index % 2 === 0) {
          plain.push(await run(undefined));
          sandboxed.push(await run(prepared.runner));
        } else {
          sandboxed.push(await run(prepared.runner));
          plain.push(await run(undefined));
        }
      }
      sides.plain.push(...plain);
      sides.sandboxed.push(...sandboxed);
      perRound.push({ plainP50: percentile(plain, 0.5), sandboxedP50: percentile(sandboxed, 0.5) });
    }
    const round2 = (value: number) => Math.round(value * 100) / 100;
    const plainP50 = percentile(sides.plain, 0.5);
    const sandboxedP50 = percentile(sides.sandboxed, 0.5);
    const report = {
      calls: calls * rounds,
      plain: { p50Ms: round2(plainP50), p99Ms: round2(percentile(sides.plain, 0.99)) },
      sandboxed: { p50Ms: round2(sandboxedP50), p99Ms: round2(percentile(sides.sandboxed, 0.99)) },
      ratio: round2(sandboxedP50 / plainP50),
      addedMs: round2(sandboxedP50 - plainP50),
      targetAddedMs: TARGET_ADDED_MS,
      pass: sandboxedP50 - plainP50 <= TARGET_ADDED_MS,
      rounds: perRound.map((round) => ({
        plainP50Ms: round2(round.plainP50),
        sandboxedP50Ms: round2(round.sandboxedP50),
      })),
    };
    if (flags.json) {
      process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
      return;
    }
    const version = (await readFile('/proc/version', 'utf8').catch(() => '')).split(' ')[2] ?? '';
    process.stdout.write(
      `\nSandbox benchmark — shell_exec "true", ${report.calls} calls per side; Node ${process.version}, Linux ${version}\n\n` +
        `without sandbox   p50 ${String(report.plain.p50Ms).padStart(7)} ms   p99 ${String(report.plain.p99Ms).padStart(7)} ms\n` +
        `with sandbox      p50 ${String(report.sandboxed.p50Ms).padStart(7)} ms   p99 ${String(report.sandboxed.p99Ms).padStart(7)} ms\n` +
        `ratio ${report.ratio.toFixed(2)}×, added ${report.addedMs} ms at p50 (target ≤ ${TARGET_ADDED_MS} ms)  ${report.pass ? 'PASS' : 'FAIL'}\n`,
    );
  } finally {
    await rm(workdir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  progress(`sandbox benchmark FAILED: ${(error as Error).stack ?? String(error)}`);
  process.exit(1);
});

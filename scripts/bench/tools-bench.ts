/**
 * Tools benchmark: the worker's grep and glob against the tools they are built on, on one large
 * tree (≥ 50k files, generated once and cached), measured side by side in one run.
 *
 *   grep, rare literal     — our grep tool vs `rg -n -e LITERAL` run directly (a full scan each);
 *   grep, common word      — our grep tool (capped at 100, sorted by mtime) vs rg's time to its
 *                            first 100 lines;
 *   grep, regex            — our grep tool vs `rg -n -e REGEX`;
 *   glob `**\/*.ts`        — our glob tool (newest first, capped) vs tinyglobby + stat + sort done
 *                            directly.
 *
 * Each pair runs alternately for several rounds; figures are medians. Targets (reported, not
 * enforced): rare literal ≤ 1.1× rg; common word ≤ 3× rg's first 100; glob ≤ 1.2× the direct way.
 *
 * Usage: node scripts/bench/tools-bench.ts [--quick] [--json] [--rounds N]
 *   --quick   a 5k-file tree and 3 rounds; the full run uses 50k files and 7 rounds.
 *   MOLF_BENCH_TREE=dir  where the generated tree is kept (default: the OS temp dir).
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { createSilentLogger } from '@molf/logging';
import type { ToolCallId } from '@molf/protocol';
import { createPathPolicy, createReadTracker, globTool, grepTool, type ToolHandler } from '@molf/worker';
import { glob } from 'tinyglobby';
import { BENCH_OPTIONS } from './bench-flags.ts';

const { values: flags } = parseArgs({ options: BENCH_OPTIONS, strict: true });
const fileCount = flags.quick ? 5_000 : 50_000;
const rounds = Number(flags.rounds ?? (flags.quick ? 3 : 7));
const RARE = 'ZEBRA_QUOKKA_7731';
const REGEX = 'handle[A-Z][a-z]+Event[0-9]{3}';
const progress = (message: string) => process.stderr.write(`${message}\n`);

/** Makes (once) a tree of source-like files: 100 per directory, a rare literal in three of them. */
async function ensureTree(): Promise<string> {
  const root = join(process.env.MOLF_BENCH_TREE ?? tmpdir(), `molf-bench-tree-${fileCount}`);
  const marker = join(root, '.complete');
  if (existsSync(marker)) return root;
  progress(`generating ${fileCount} files in ${root} (once)…`);
  const words = ['const', 'return', 'function', 'value', 'result', 'items', 'index', 'config', 'options', 'error'];
  let next = 0;
  const writeOne = async (index: number) => {
    const dir = join(root, `pkg${Math.floor(index / 1_000)}`, `mod${Math.floor(index / 100) % 10}`);
    await mkdir(dir, { recursive: true });
    const lines: string[] = [];
    for (let line = 0; line < 40; line += 1) {
      const a = words[(index + line) % words.length];
      const b = words[(index * 7 + line * 3) % words.length];
      lines.push(`  ${a} ${b}${line} = ${b}(${a}, ${index});`);
    }
    if (index % 997 === 0)
      lines.push(`  export function handleClickEvent${String(index % 1000).padStart(3, '0')}() {}`);
    if (index === 17 || index === Math.floor(fileCount / 2) || index === fileCount - 3) lines.push(`// ${RARE}`);
    await writeFile(join(dir, `file${index}.${index % 3 === 0 ? 'js' : 'ts'}`), `${lines.join('\n')}\n`);
  };
  await Promise.all(
    Array.from({ length: 64 }, async () => {
      while (next < fileCount) await writeOne(next++);
    }),
  );
  await writeFile(marker, new Date().toISOString());
  return root;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

async function timed(task: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await task();
  return performance.now() - started;
}

/** rg run directly; with `firstLines`, the time until that many lines arrived (then rg is stopped). */
function ripgrep(args: string[], firstLines?: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn('rg', args, { stdio: ['ignore', 'pipe', 'ignore'] });
    let lines = 0;
    const reader = createInterface({ input: child.stdout });
    reader.on('line', () => {
      lines += 1;
      if (firstLines !== undefined && lines === firstLines) {
        reader.close();
        child.kill();
      }
    });
    child.on('error', reject);
    child.on('close', () => resolve(lines));
  });
}

async function main(): Promise<void> {
  const root = await ensureTree();
  const paths = await createPathPolicy({ workdir: root });
  const reads = createReadTracker();
  let calls = 0;
  const runTool = async (tool: ToolHandler, args: Record<string, unknown>) => {
    const result = await tool.run(args, {
      toolCallId: `bench_${calls++}` as ToolCallId,
      workdir: root,
      paths,
      sessionId: undefined,
      reads,
      signal: new AbortController().signal,
      logger: createSilentLogger(),
    });
    if (result.error !== undefined) throw new Error(`${tool.definition.name} failed: ${result.error}`);
    return result;
  };

  const pairs: Array<{
    name: string;
    target: number;
    ours: () => Promise<unknown>;
    baseline: () => Promise<unknown>;
    baselineName: string;
  }> = [
    {
      name: 'grep, rare literal',
      target: 1.1,
      ours: () => runTool(grepTool, { pattern: RARE }),
      baseline: () => ripgrep(['-n', '-e', RARE, root]),
      baselineName: 'rg -n (full scan)',
    },
    {
      name: 'grep, common word (capped)',
      target: 3,
      ours: () => runTool(grepTool, { pattern: 'return' }),
      baseline: () => ripgrep(['-n', '-e', 'return', root], 100),
      baselineName: 'rg -n, first 100 lines',
    },
    {
      name: 'grep, regex',
      target: Number.NaN,
      ours: () => runTool(grepTool, { pattern: REGEX }),
      baseline: () => ripgrep(['-n', '-e', REGEX, root]),
      baselineName: 'rg -n (full scan)',
    },
    {
      name: 'glob **/*.ts, newest first',
      target: 1.2,
      ours: () => runTool(globTool, { pattern: '**/*.ts' }),
      baseline: async () => {
        const files = await glob(['**/*.ts'], { cwd: root, absolute: true, dot: true });
        const times = new Array<number>(files.length);
        let next = 0;
        await Promise.all(
          Array.from({ length: 64 }, async () => {
            while (next < files.length) {
              const index = next++;
              times[index] = (await stat(files[index] as string)).mtimeMs;
            }
          }),
        );
        return files
          .map((_, index) => index)
          .sort((a, b) => (times[b] as number) - (times[a] as number))
          .slice(0, 100);
      },
      baselineName: 'tinyglobby + stat (64 at a time) + sort',
    },
  ];

  // Sanity: the rare literal is found in exactly three files by both.
  const rare = await runTool(grepTool, { pattern: RARE });
  if (rare.output.split('\n').length !== 3) throw new Error(`expected 3 matches of ${RARE}, got:\n${rare.output}`);

  const results = [];
  for (const pair of pairs) {
    const ours: number[] = [];
    const baseline: number[] = [];
    await pair.ours();
    await pair.baseline();
    for (let round = 0; round < rounds; round += 1) {
      progress(`${pair.name}: round ${round + 1}/${rounds}`);
      if (round % 2 === 0) {
        ours.push(await timed(pair.ours));
        baseline.push(await timed(pair.baseline));
      } else {
        baseline.push(await timed(pair.baseline));
        ours.push(await timed(pair.ours));
      }
    }
    const ratio = median(ours) / median(baseline);
    results.push({
      name: pair.name,
      baseline: pair.baselineName,
      oursMs: Math.round(median(ours) * 10) / 10,
      baselineMs: Math.round(median(baseline) * 10) / 10,
      ratio: Math.round(ratio * 100) / 100,
      target: Number.isNaN(pair.target) ? null : pair.target,
      pass: Number.isNaN(pair.target) ? null : ratio <= pair.target,
    });
  }

  if (flags.json) {
    process.stdout.write(`${JSON.stringify({ files: fileCount, rounds, results }, null, 2)}\n`);
    return;
  }
  const version = (await readFile('/proc/version', 'utf8').catch(() => '')).split(' ')[2] ?? '';
  process.stdout.write(
    `\nTools benchmark — ${fileCount} files, ${rounds} rounds, medians; Node ${process.version}, Linux ${version}\n\n`,
  );
  for (const result of results) {
    const verdict =
      result.target === null
        ? '(no target)'
        : `(target ≤ ${result.target}×)  ${result.pass === true ? 'PASS' : 'FAIL'}`;
    process.stdout.write(
      `${result.name.padEnd(30)} ours ${String(result.oursMs).padStart(8)} ms   ${result.baseline}: ${String(result.baselineMs).padStart(8)} ms   ${result.ratio.toFixed(2)}× ${verdict}\n`,
    );
  }
}

main().catch((error: unknown) => {
  progress(`tools benchmark FAILED: ${(error as Error).stack ?? String(error)}`);
  process.exit(1);
});

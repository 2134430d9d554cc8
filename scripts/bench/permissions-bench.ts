/**
 * Permissions benchmark: one approval-gate evaluation (parse the shell line, find every command,
 * match the rules, build the "always" patterns) for typical calls, against the default rules plus a
 * realistic user block. Each case is timed call by call; the report gives the median, p99 and
 * evaluations per second, and the ratio of the median to a baseline measured in the same run:
 * tree-sitter alone parsing the same 20-segment line (the floor any real bash parser sets).
 *
 * Target (reported, not enforced): p99 under 1 ms per evaluation, parsing included, for the
 * 20-segment line.
 *
 * Usage: node scripts/bench/permissions-bench.ts [--quick] [--json] [--rounds N]
 *   --quick   2,000 evaluations per case; the full run does 20,000.
 */
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import {
  createPermissionEngine,
  loadShellParser,
  type PermissionRule,
  safeParsePermissionsFile,
} from '@molf/permissions';
import { readDefaultPermissionsText } from '@molf/permissions/default-file';
import { BENCH_OPTIONS } from './bench-flags.ts';

const { values: flags } = parseArgs({ options: BENCH_OPTIONS, strict: true });
const iterations = Number(flags.rounds ?? (flags.quick ? 2_000 : 20_000));

const USER_RULES = `{
  "shell_exec": {
    "*": "ask",
    "cd *": "allow", "git rev-parse *": "allow",
    "git status": "allow", "git diff *": "allow", "git log *": "allow", "git show *": "allow",
    "ls *": "allow", "cat *": "allow", "head *": "allow", "tail *": "allow", "wc *": "allow",
    "grep *": "allow", "rg *": "allow", "find *": "allow", "echo *": "allow", "pwd": "allow",
    "npm test": "allow", "npm run *": "allow", "pnpm *": "allow", "node --version": "allow",
    "rm -rf *": "deny", "git push *": "deny", "curl *": "deny", "sudo *": "deny"
  },
  "read_file": { "~/.ssh/*": "deny", "*.pem": "deny" },
  "github_*": "ask"
}`;

const TWENTY_SEGMENTS = [
  'cd packages/app',
  'git status',
  'git diff --stat HEAD~1',
  'ls -la src | grep -v node_modules',
  'cat package.json | head -n 20',
  'echo "building $(git rev-parse --short HEAD)"',
  'npm run build -- --mode production',
  'npm test',
  'wc -l src/*.ts',
  'find . -name "*.test.ts" -newer package.json',
  'grep -rn TODO src',
  'tail -n 5 CHANGELOG.md',
  'git log --oneline -n 5',
  'pnpm lint',
  'node --version',
  'echo done > /dev/null',
  'rg -n "export function" src/index.ts',
  'git show --stat HEAD',
  'pwd',
  'ls dist',
].join(' && ');

function percentile(sorted: number[], fraction: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))] as number;
}

async function main(): Promise<void> {
  const defaults = safeParsePermissionsFile(readDefaultPermissionsText());
  const user = safeParsePermissionsFile(USER_RULES);
  if (!defaults.ok || !user.ok) throw new Error('the benchmark rules do not parse');
  const rules: PermissionRule[] = [...defaults.rules, ...user.rules];
  const engine = await createPermissionEngine();
  const parser = await loadShellParser();
  const layers = { file: rules, session: [] };
  // The worker's answer about where paths lead (resolved before evaluation, outside these timings):
  // here every path leads to itself and a glob names one file.
  const canonicalPaths = (given: string) => [given];
  // The engine keeps the analysis of the last line (the gate asks for its paths, then evaluates it):
  // alternate two spellings of each line so that every evaluation analyzes it afresh.
  let round = 0;
  const evaluate = (tool: string, args: Record<string, unknown>) => () => {
    round += 1;
    const spelled =
      typeof args.command === 'string' && round % 2 === 1 ? { ...args, command: `${args.command} ` } : args;
    return engine.evaluate({ now: Date.now(), tool, args: spelled, layers, home: '/home/dev', canonicalPaths });
  };

  const cases: Array<{ name: string; run: () => unknown; expect?: string }> = [
    {
      name: 'baseline: tree-sitter parse only',
      run: () => parser.parse(TWENTY_SEGMENTS, { timeoutMs: 1_000 })?.delete(),
    },
    { name: 'read_file src/index.ts', run: evaluate('read_file', { path: 'src/index.ts' }), expect: 'allow' },
    { name: 'read_file ./config/../.env', run: evaluate('read_file', { path: './config/../.env' }), expect: 'deny' },
    { name: 'shell: git status', run: evaluate('shell_exec', { command: 'git status' }), expect: 'allow' },
    { name: 'shell: 20 segments', run: evaluate('shell_exec', { command: TWENTY_SEGMENTS }), expect: 'allow' },
    {
      name: 'shell: sudo bash -c nested',
      run: evaluate('shell_exec', { command: `sudo env A=1 bash -c "ls && xargs rm -rf < list"` }),
      expect: 'deny',
    },
    { name: 'MCP tool github_create_issue', run: evaluate('github_create_issue', { title: 'x' }), expect: 'ask' },
  ];

  const results = [];
  for (const entry of cases) {
    const outcome = entry.run() as { decision?: { type: string } } | undefined;
    if (entry.expect !== undefined && outcome?.decision?.type !== entry.expect) {
      throw new Error(`${entry.name}: expected ${entry.expect}, got ${outcome?.decision?.type}`);
    }
    for (let warm = 0; warm < Math.min(500, iterations); warm += 1) entry.run();
    const times: number[] = [];
    for (let index = 0; index < iterations; index += 1) {
      const started = performance.now();
      entry.run();
      times.push(performance.now() - started);
    }
    times.sort((a, b) => a - b);
    const total = times.reduce((sum, time) => sum + time, 0);
    results.push({
      name: entry.name,
      medianMs: percentile(times, 0.5),
      p99Ms: percentile(times, 0.99),
      perSecond: Math.round((iterations / total) * 1_000),
    });
  }
  const baseline = results[0]?.medianMs ?? Number.NaN;
  const rows = results.map((result) => ({
    ...result,
    ratio: Math.round((result.medianMs / baseline) * 100) / 100,
  }));
  const twenty = rows.find((row) => row.name === 'shell: 20 segments');
  const pass = twenty !== undefined && twenty.p99Ms < 1;

  if (flags.json) {
    process.stdout.write(`${JSON.stringify({ iterations, results: rows, target: { p99Ms: 1, pass } }, null, 2)}\n`);
    return;
  }
  const version = (await readFile('/proc/version', 'utf8').catch(() => '')).split(' ')[2] ?? '';
  process.stdout.write(
    `\nPermissions benchmark — ${iterations} evaluations per case; Node ${process.version}, Linux ${version}\n` +
      `(20-segment line: ${TWENTY_SEGMENTS.length} characters)\n\n`,
  );
  for (const row of rows) {
    process.stdout.write(
      `${row.name.padEnd(34)} median ${row.medianMs.toFixed(3).padStart(7)} ms   p99 ${row.p99Ms.toFixed(3).padStart(7)} ms   ${String(row.perSecond).padStart(8)}/s   ${row.ratio.toFixed(2)}× baseline\n`,
    );
  }
  process.stdout.write(
    `\n20-segment line p99 ${twenty?.p99Ms.toFixed(3)} ms (target < 1 ms)  ${pass ? 'PASS' : 'FAIL'}\n`,
  );
}

main().catch((error: unknown) => {
  process.stderr.write(`permissions benchmark FAILED: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});

/**
 * `pnpm bench`: the link, gate, tools, permissions, sessions, events, skills and subagents, sandbox, start-up, cron, database,
 * cluster (several servers on one database) and web client benchmarks, each in its own process (so one's sockets and timers can't skew the other), with the
 * same flags (--quick, --json, --rounds N).
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const benches = [
  'link-bench.ts',
  'gate-bench.ts',
  'tools-bench.ts',
  'permissions-bench.ts',
  'sessions-bench.ts',
  'events-bench.ts',
  'subagents-bench.ts',
  'sandbox-bench.ts',
  'startup-bench.ts',
  'cron-bench.ts',
  'database-bench.ts',
  'cluster-bench.ts',
  'web-bench.ts',
];
let failed = false;
for (const bench of benches) {
  const script = fileURLToPath(new URL(`./${bench}`, import.meta.url));
  const result = spawnSync(process.execPath, [script, ...process.argv.slice(2)], { stdio: 'inherit' });
  if (result.status !== 0) {
    process.stderr.write(`${bench} failed (exit ${result.status ?? result.signal})\n`);
    failed = true;
  }
}
process.exit(failed ? 1 : 0);

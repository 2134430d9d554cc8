/**
 * Vitest global setup: the CLI tests start `molf` as users do (apps/cli/bin/molf.js), so the bundle
 * they run is rebuilt first when an edit made it stale; otherwise they would test the sources and
 * leave the bundle's own mistakes (a path, a chunk) to users.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export function setup(): void {
  const script = fileURLToPath(new URL('./build-cli.ts', import.meta.url));
  const result = spawnSync(process.execPath, [script, '--if-stale'], { stdio: 'inherit' });
  if (result.status !== 0) throw new Error(`building the CLI bundle failed (exit ${result.status ?? result.signal})`);
}

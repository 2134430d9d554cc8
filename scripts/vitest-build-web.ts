/**
 * Vitest global setup: the browser tests load the page the server serves (apps/web/dist), so it is
 * built again first when a source changed since; otherwise they would test an old page.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export function setup(): void {
  const script = fileURLToPath(new URL('./build-web.ts', import.meta.url));
  const result = spawnSync(process.execPath, [script, '--if-stale'], { stdio: 'inherit' });
  if (result.status !== 0) throw new Error(`building the web client failed (exit ${result.status ?? result.signal})`);
}

import type { WorkerInfo } from '@molf/protocol';
import type { DatabaseHealth } from '../database/index.ts';

/** What `/healthz` answers: the services' state, readable without a token. */
export type HealthReport = {
  /** `degraded` while the database cannot be reached: the instance takes no new work. */
  status: 'ok' | 'degraded';
  version: string;
  uptimeSeconds: number;
  workers: WorkerHealth;
  /** The database link, when the server keeps its state in one. */
  database?: DatabaseHealth;
};

/**
 * Counts only: /healthz answers without a token, so it names no worker, path or reason.
 * `sandbox` counts online workers: `on` (commands run in it), `failed` (asked for, self-test
 * failed, running without), `off` (not asked for, or a worker too old to say).
 */
export type WorkerHealth = {
  online: number;
  known: number;
  sandbox: { on: number; failed: number; off: number };
};

export function toWorkerHealth(workers: readonly WorkerInfo[]): WorkerHealth {
  const online = workers.filter((worker) => worker.state === 'online');
  const sandbox = { on: 0, failed: 0, off: 0 };
  for (const worker of online) {
    if (worker.sandbox?.active === true) sandbox.on += 1;
    else if (worker.sandbox !== undefined && worker.sandbox.mode !== 'off') sandbox.failed += 1;
    else sandbox.off += 1;
  }
  return { online: online.length, known: workers.length, sandbox };
}

import type { Logger } from '@molf/logging';
import type { WorkerId } from '@molf/protocol';
import type { AgentDirectory } from '../agent/index.ts';
import type { WorkerRegistry } from '../workers/worker-registry.ts';

/**
 * Logs what a worker's snapshot of skills and agents holds when it registers or the snapshot changes,
 * and each problem once (until it is gone), so a broken file shows in the server's log too.
 */
export function createCatalogReporter(options: { registry: WorkerRegistry; agents: AgentDirectory; logger: Logger }) {
  const reported = new Map<WorkerId, Set<string>>();
  return (workerId: WorkerId): void => {
    const catalog = options.registry.registration(workerId)?.catalog;
    if (catalog === undefined) return;
    options.logger.info(
      { workerId, version: catalog.version, skills: catalog.skills.length, agents: catalog.agents.length },
      'worker skills and agents',
    );
    const before = reported.get(workerId) ?? new Set<string>();
    const now = new Set<string>();
    for (const problem of options.agents.problems(workerId)) {
      const key = `${problem.path}\u0000${problem.message}`;
      now.add(key);
      if (before.has(key)) continue;
      const log = problem.severity === 'error' ? options.logger.error : options.logger.warn;
      log.call(options.logger, { workerId, path: problem.path }, problem.message);
    }
    reported.set(workerId, now);
  };
}

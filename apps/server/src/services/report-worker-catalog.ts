import { createProblemLog, type FileProblem, type Logger } from '@molf/logging';
import type { WorkerId } from '@molf/protocol';
import type { AgentDirectory } from '../agent/index.ts';
import type { WorkerRegistry } from '../workers/worker-registry.ts';

/**
 * Logs what a worker's snapshot of skills and agents holds when it registers or the snapshot changes,
 * and each problem once (until it is gone), so a broken file shows in the server's log too.
 */
export function createCatalogReporter(options: { registry: WorkerRegistry; agents: AgentDirectory; logger: Logger }) {
  const problemLogs = new Map<WorkerId, (problems: readonly FileProblem[]) => void>();
  return (workerId: WorkerId): void => {
    const catalog = options.registry.registration(workerId)?.catalog;
    if (catalog === undefined) return;
    options.logger.info(
      { workerId, version: catalog.version, skills: catalog.skills.length, agents: catalog.agents.length },
      'worker skills and agents',
    );
    let logProblems = problemLogs.get(workerId);
    if (logProblems === undefined) {
      logProblems = createProblemLog(options.logger.child({ workerId }));
      problemLogs.set(workerId, logProblems);
    }
    logProblems(options.agents.problems(workerId));
  };
}

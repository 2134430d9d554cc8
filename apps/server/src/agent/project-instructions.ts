import type { Instructions, WorkerId } from '@molf/protocol';
import type { JobDispatcher } from '../workers/job-dispatcher.ts';

export type ProjectInstructions = {
  /**
   * AGENTS.md (or CLAUDE.md) files from the worker: at the workdir root, or with `forPath` those
   * of the directories down to that file. None when the worker cannot answer.
   */
  read(workerId: WorkerId, options: { forPath?: string; signal: AbortSignal }): Promise<Instructions['files']>;
};

/** How long a turn waits for a worker's instruction files. */
const INSTRUCTIONS_TIMEOUT_MS = 10_000;

export function createProjectInstructions(dispatcher: JobDispatcher): ProjectInstructions {
  return {
    async read(workerId, options) {
      const outcome = await dispatcher.request({
        workerId,
        request: {
          method: 'instructions/read',
          params: options.forPath === undefined ? {} : { forPath: options.forPath },
        },
        timeoutMs: INSTRUCTIONS_TIMEOUT_MS,
        signal: options.signal,
      });
      return outcome.ok ? outcome.result.files : [];
    },
  };
}

import type { WorkerEvent, WorkerId, WorkerInfo } from '@molf/protocol';
import type { WorkerChanges } from './worker-changes.ts';

/**
 * The workers followed (one, or all) as they are now, each as a `worker.changed`, then each change
 * as it comes, with the worker read anew: no gap (the listener is attached before the snapshot) and
 * never a stale state (every event carries the worker as it is when sent).
 */
export async function* streamWorkerEvents(options: {
  changes: WorkerChanges;
  /** The workers as clients see them. */
  list: () => WorkerInfo[];
  /** One worker as clients see it; undefined for an unknown id. */
  describe: (workerId: WorkerId) => WorkerInfo | undefined;
  workerId: WorkerId | undefined;
  signal: AbortSignal | undefined;
}): AsyncGenerator<WorkerEvent> {
  const { signal } = options;
  const queue: Array<{ type: WorkerEvent['type']; workerId: WorkerId }> = [];
  let wake: (() => void) | undefined;
  const unsubscribe = options.changes.subscribe((change) => {
    if (options.workerId !== undefined && change.workerId !== options.workerId) return;
    queue.push(change);
    wake?.();
  });
  const onAbort = () => wake?.();
  signal?.addEventListener('abort', onAbort);
  try {
    for (const worker of options.list()) {
      if (options.workerId === undefined || worker.workerId === options.workerId) {
        yield { type: 'worker.changed', worker };
      }
    }
    while (signal?.aborted !== true) {
      const change = queue.shift();
      if (change === undefined) {
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
        wake = undefined;
        continue;
      }
      const worker = options.describe(change.workerId);
      if (worker !== undefined) yield { type: change.type, worker };
    }
  } finally {
    signal?.removeEventListener('abort', onAbort);
    unsubscribe();
  }
}

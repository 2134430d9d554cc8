import type { WorkerEvent, WorkerId } from '@molf/protocol';

/** That something about a worker changed, and what kind of change; listeners read the worker anew. */
export type WorkerChange = { type: WorkerEvent['type']; workerId: WorkerId };

export type WorkerChanges = {
  publish(change: WorkerChange): void;
  /** Calls `listener` with every change from now on, until the returned function is called. */
  subscribe(listener: (change: WorkerChange) => void): () => void;
};

/** Tells `workers.events` subscribers when a worker connects, disconnects or shows something new. */
export function createWorkerChanges(): WorkerChanges {
  const listeners = new Set<(change: WorkerChange) => void>();
  return {
    publish(change) {
      for (const listener of listeners) listener(change);
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

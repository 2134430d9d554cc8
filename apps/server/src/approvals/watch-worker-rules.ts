import type { Logger } from '@molf/logging';
import type { WorkerId } from '@molf/protocol';
import type { PermissionsStore } from './permissions-store.ts';

export type WorkerRulesWatch = {
  /** A worker came online: its file is read now (when there is one) and again whenever it changes. */
  connected(workerId: WorkerId): void;
  /** A worker went offline: its file is no longer watched. */
  disconnected(workerId: WorkerId): void;
  /** Stops every watch. */
  close(): void;
};

/**
 * Keeps the permissions file of each online worker read: once when the worker connects (a file
 * broken while nobody looked is reported before any tool call) and again after each change (a
 * person breaks or fixes it while a chat runs, another server on the database saves it). Reading is what reports: the store tells the
 * gate, which publishes `permissions.invalid` and `permissions.valid` on `approvals.events` and
 * keeps the problem for `permissions.show` and `workers.list`. A worker without a file yet keeps
 * it that way: the file is seeded with the defaults at its first use, as before, not at connect.
 */
export function createWorkerRulesWatch(options: { store: PermissionsStore; logger: Logger }): WorkerRulesWatch {
  const { store, logger } = options;
  /** The stop function of each watched worker; `undefined` while its watch is being set up. */
  const watches = new Map<WorkerId, (() => void) | undefined>();
  let closed = false;

  async function readIfPresent(workerId: WorkerId): Promise<void> {
    // load never throws; a file that is gone after having been read is a problem load reports.
    if (store.exists(workerId) || store.hasRead(workerId)) await store.load(workerId);
  }

  const read = (workerId: WorkerId) =>
    readIfPresent(workerId).catch((error: unknown) => {
      logger.error({ err: error, workerId }, 'reading the permissions file failed');
    });

  async function start(workerId: WorkerId): Promise<void> {
    if (closed || !watches.has(workerId) || watches.get(workerId) !== undefined) return;
    watches.set(
      workerId,
      store.watch(workerId, () => void read(workerId)),
    );
    await read(workerId);
  }

  return {
    connected(workerId) {
      if (closed) return;
      if (watches.has(workerId)) {
        void read(workerId);
        return;
      }
      watches.set(workerId, undefined);
      start(workerId).catch((error: unknown) => {
        logger.warn({ err: error, workerId }, 'cannot watch the permissions file; edits show at the next tool call');
      });
    },
    disconnected(workerId) {
      watches.get(workerId)?.();
      watches.delete(workerId);
    },
    close() {
      closed = true;
      for (const stop of watches.values()) stop?.();
      watches.clear();
    },
  };
}

import type { WorkerInfo } from '@molf/protocol';
import { type Accessor, createEffect, createSignal, on, onCleanup } from 'solid-js';
import type { ServerLink } from '../link/server-link.ts';

/** How often the list is read again while the page is visible (workers come and go). */
const REFRESH_MS = 4_000;

export type WorkersStore = {
  workers: Accessor<WorkerInfo[]>;
  /** Set when the last read failed. */
  error: Accessor<string | undefined>;
  refresh(): Promise<void>;
};

/** The server's workers, read again every few seconds while the page is visible and after a reconnect. */
export function createWorkersStore(link: ServerLink): WorkersStore {
  const [workers, setWorkers] = createSignal<WorkerInfo[]>([]);
  const [error, setError] = createSignal<string | undefined>();
  let inFlight: Promise<void> | undefined;
  const refresh = (): Promise<void> => {
    inFlight ??= link.client.rpc.workers.list
      .query()
      .then(
        (list) => {
          setWorkers(list);
          setError(undefined);
        },
        (failure: unknown) => {
          setError(failure instanceof Error ? failure.message : String(failure));
        },
      )
      .finally(() => {
        inFlight = undefined;
      });
    return inFlight;
  };
  const timer = setInterval(() => {
    if (document.visibilityState === 'visible' && link.state().type === 'connected') void refresh();
  }, REFRESH_MS);
  onCleanup(() => clearInterval(timer));
  createEffect(on(link.reconnects, () => void refresh()));
  return { workers, error, refresh };
}

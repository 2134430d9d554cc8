import type { Logger } from '@molf/logging';

/**
 * The notifications a notifier is sending: each runs on its own (a failure is logged, never
 * thrown), and closing cancels them (`signal`) and waits for them. Idempotent.
 */
export function createBackgroundSends(logger: Logger) {
  const stopping = new AbortController();
  const inFlight = new Set<Promise<void>>();
  let closing: Promise<void> | undefined;
  return {
    signal: stopping.signal,
    get stopped() {
      return stopping.signal.aborted;
    },
    /** Starts `send`; what it throws is logged with `fields`. */
    start(send: () => Promise<void>, fields: Record<string, unknown>, failure: string): void {
      const sending = send().catch((error: unknown) => logger.error({ err: error, ...fields }, failure));
      inFlight.add(sending);
      void sending.finally(() => inFlight.delete(sending));
    },
    close(): Promise<void> {
      closing ??= (async () => {
        stopping.abort();
        await Promise.allSettled([...inFlight]);
      })();
      return closing;
    },
  };
}

import type { CronEvent } from '@molf/protocol';
import type { CronScheduler } from './cron-scheduler.ts';

/** The scheduler's events from now on (of one worker, or all), until `signal` aborts. */
export async function* streamCronEvents(
  scheduler: CronScheduler,
  filter: { workerId?: string | undefined },
  signal: AbortSignal | undefined,
): AsyncGenerator<CronEvent> {
  const queue: CronEvent[] = [];
  let wake: (() => void) | undefined;
  const unsubscribe = scheduler.subscribe((event) => {
    if (filter.workerId !== undefined && event.workerId !== filter.workerId) return;
    queue.push(event);
    wake?.();
  });
  const onAbort = () => wake?.();
  signal?.addEventListener('abort', onAbort);
  try {
    while (signal?.aborted !== true) {
      const event = queue.shift();
      if (event !== undefined) {
        yield event;
        continue;
      }
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
      wake = undefined;
    }
  } finally {
    signal?.removeEventListener('abort', onAbort);
    unsubscribe();
  }
}

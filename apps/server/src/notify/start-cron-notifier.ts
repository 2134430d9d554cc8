import type { Logger } from '@molf/logging';
import type { CronScheduler } from '../cron/index.ts';
import type { WorkerRegistry } from '../workers/worker-registry.ts';
import type { NotifyTarget } from './notify-settings.ts';
import { sendRequest } from './send-request.ts';
import { type CronNotice, toCronRequest } from './to-cron-request.ts';

/**
 * Sends what scheduled prompts have to tell people (a run that failed, a heartbeat that reports
 * something) to each notification target. Best effort, like approval notifications: sending never
 * delays the scheduler, each target is given up after `timeoutMs`, a failure is logged. A run's
 * question under `onAsk: wait` reaches the targets as every approval request does.
 */
export function startCronNotifier(options: {
  scheduler: Pick<CronScheduler, 'subscribe'>;
  targets: readonly NotifyTarget[];
  registry: Pick<WorkerRegistry, 'get'>;
  logger: Logger;
  timeoutMs?: number;
}): { close(): Promise<void> } {
  const { targets, logger } = options;
  const stopping = new AbortController();
  const inFlight = new Set<Promise<void>>();

  async function notify(notice: CronNotice): Promise<void> {
    const worker = { workerId: notice.workerId, name: options.registry.get(notice.workerId)?.name };
    await Promise.all(
      targets.map(async (target) => {
        const result = await sendRequest({
          request: toCronRequest(notice, worker, target),
          signal: stopping.signal,
          ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
        });
        const fields = { jobId: notice.jobId, type: notice.type, target: `${target.type} ${new URL(target.url).host}` };
        if (result.ok) logger.info(fields, 'cron notification sent');
        else logger.warn({ ...fields, error: result.error }, 'cron notification failed');
      }),
    );
  }

  const unsubscribe = options.scheduler.subscribe((event) => {
    if ((event.type !== 'cron.failed' && event.type !== 'cron.reported') || stopping.signal.aborted) return;
    const sending = notify(event).catch((error: unknown) => {
      logger.error({ err: error, jobId: event.jobId }, 'cron notification failed');
    });
    inFlight.add(sending);
    void sending.finally(() => inFlight.delete(sending));
  });

  let closing: Promise<void> | undefined;
  return {
    close() {
      closing ??= (async () => {
        unsubscribe();
        stopping.abort();
        await Promise.allSettled([...inFlight]);
      })();
      return closing;
    },
  };
}

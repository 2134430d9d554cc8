import type { Logger } from '@molf/logging';
import type { CronScheduler } from '../cron/index.ts';
import type { WorkerRegistry } from '../workers/worker-registry.ts';
import { createBackgroundSends } from './background-sends.ts';
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
  const sends = createBackgroundSends(logger);

  async function notify(notice: CronNotice): Promise<void> {
    const worker = { workerId: notice.workerId, name: options.registry.get(notice.workerId)?.name };
    await Promise.all(
      targets.map(async (target) => {
        const result = await sendRequest({
          request: toCronRequest(notice, worker, target),
          signal: sends.signal,
          ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
        });
        const fields = { jobId: notice.jobId, type: notice.type, target: `${target.type} ${new URL(target.url).host}` };
        if (result.ok) logger.info(fields, 'cron notification sent');
        else logger.warn({ ...fields, error: result.error }, 'cron notification failed');
      }),
    );
  }

  const unsubscribe = options.scheduler.subscribe((event) => {
    if ((event.type !== 'cron.failed' && event.type !== 'cron.reported') || sends.stopped) return;
    sends.start(() => notify(event), { jobId: event.jobId }, 'cron notification failed');
  });

  return {
    close() {
      unsubscribe();
      return sends.close();
    },
  };
}

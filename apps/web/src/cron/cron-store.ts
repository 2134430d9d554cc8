import type { CronEvent, CronJob } from '@molf/protocol';
import { type Accessor, createEffect, createSignal, on, onCleanup } from 'solid-js';
import { errorMessage } from '../link/rpc-error.ts';
import type { ServerLink } from '../link/server-link.ts';

/** Failure notices kept on screen at most (the oldest goes first): one per job, so a few. */
const MAX_NOTICES = 5;

/** A failed run the person has not dismissed yet: one per job, the latest. */
export type CronFailureNotice = {
  jobId: string;
  workerId: string;
  name: string;
  reason: string;
  /** When the slot is tried again; absent when it is not. */
  retryAt?: string;
  at: string;
};

export type CronStore = {
  /** Every job of every worker, as last read; undefined before the first read. */
  jobs: Accessor<CronJob[] | undefined>;
  /** Set when the last read failed. */
  error: Accessor<string | undefined>;
  /** Reads the jobs again (a read asked for while one runs is made once it ends). */
  refresh(): Promise<void>;
  /** Failed runs not dismissed yet, oldest first. */
  failures: Accessor<CronFailureNotice[]>;
  dismiss(jobId: string): void;
  /** Dismisses the notices of a worker's jobs: its Scheduled view is on screen and shows them. */
  dismissWorker(workerId: string): void;
  /** A job's name, when this page has seen it (a removed job's too); undefined otherwise. */
  jobName(jobId: string): string | undefined;
  /**
   * Runs the job once now (`cron.run`) and returns it as it is after: its `lastRun` says how the
   * run went. The view that asked shows a failure; it is no notice.
   */
  runNow(jobId: string): Promise<CronJob>;
  /** Pauses (`false`) or resumes (`true`) a job. */
  setEnabled(jobId: string, enabled: boolean): Promise<void>;
  remove(jobId: string): Promise<void>;
};

/**
 * The server's scheduled prompts, kept live: read once, then again after each `cron.fired` and
 * `cron.failed` (the server stores a job before it tells of its run, so the read sees the run) and
 * after a reconnect. A failed run becomes a notice until dismissed, so that it is seen while
 * another view is open; in a background tab it is also a system notification, when allowed.
 */
export function createCronStore(link: ServerLink): CronStore {
  const [jobs, setJobs] = createSignal<CronJob[]>();
  const [error, setError] = createSignal<string>();
  const [failures, setFailures] = createSignal<CronFailureNotice[]>([]);
  const names = new Map<string, string>();
  /**
   * Jobs this page runs now, and its runs (`jobId@at`) whose event has not come yet, or came
   * before the answer: such an event is no news here.
   */
  const runningHere = new Set<string>();
  const ranHere = new Set<string>();
  const heardWhileRunning = new Set<string>();

  let reading: Promise<void> | undefined;
  let readAgain = false;
  const refresh = (): Promise<void> => {
    if (reading !== undefined) {
      // The read in flight may have started before the change: one more after it.
      readAgain = true;
      return reading;
    }
    reading = (async () => {
      do {
        readAgain = false;
        try {
          const list = await link.client.rpc.cron.list.query({});
          for (const job of list) names.set(job.jobId, job.name);
          setJobs(list);
          setError(undefined);
        } catch (failure) {
          setError(errorMessage(failure));
        }
      } while (readAgain);
    })().finally(() => {
      reading = undefined;
    });
    return reading;
  };

  const noteFailure = (event: Extract<CronEvent, { type: 'cron.failed' }>) => {
    const notice: CronFailureNotice = {
      jobId: event.jobId,
      workerId: event.workerId,
      name: event.name,
      reason: event.reason,
      ...(event.retryAt === undefined ? {} : { retryAt: event.retryAt }),
      at: event.at,
    };
    setFailures((list) => [...list.filter((item) => item.jobId !== event.jobId), notice].slice(-MAX_NOTICES));
    if (document.hidden && typeof Notification !== 'undefined' && Notification.permission === 'granted') {
      const notification = new Notification(`Molf: the scheduled prompt "${event.name}" failed`, {
        body: event.reason.slice(0, 200),
        tag: `cron:${event.jobId}`,
      });
      notification.onclick = () => {
        window.focus();
        notification.close();
      };
    }
  };

  const subscription = link.client.rpc.cron.events.subscribe(
    {},
    {
      onData: (event) => {
        names.set(event.jobId, event.name);
        // The event may come before the answer to this page's run, or after it.
        const run = `${event.jobId}@${event.at}`;
        if (runningHere.has(event.jobId)) heardWhileRunning.add(run);
        const mine = runningHere.has(event.jobId) || ranHere.delete(run);
        if (event.type === 'cron.failed' && !mine) noteFailure(event);
        void refresh();
      },
    },
  );
  onCleanup(() => subscription.unsubscribe());
  // Runs and changes made while the link was down sent no event this page saw.
  createEffect(on(link.reconnects, () => void refresh()));

  return {
    jobs,
    error,
    refresh,
    failures,
    dismiss: (jobId) => setFailures((list) => list.filter((item) => item.jobId !== jobId)),
    dismissWorker: (workerId) => {
      if (failures().some((item) => item.workerId === workerId)) {
        setFailures((list) => list.filter((item) => item.workerId !== workerId));
      }
    },
    jobName: (jobId) => jobs()?.find((job) => job.jobId === jobId)?.name ?? names.get(jobId),
    async runNow(jobId) {
      runningHere.add(jobId);
      try {
        const job = await link.client.rpc.cron.run.mutate({ jobId });
        const run = `${jobId}@${job.lastRun?.at}`;
        if (!heardWhileRunning.delete(run)) ranHere.add(run);
        return job;
      } finally {
        runningHere.delete(jobId);
        void refresh();
      }
    },
    async setEnabled(jobId, enabled) {
      try {
        await link.client.rpc.cron.update.mutate({ jobId, enabled });
      } finally {
        await refresh();
      }
    },
    async remove(jobId) {
      try {
        await link.client.rpc.cron.remove.mutate({ jobId });
      } finally {
        await refresh();
      }
    },
  };
}

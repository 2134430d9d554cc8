import { randomUUID } from 'node:crypto';
import { type CronJob, DEFAULT_CRON_ON_ASK_WAIT_MS, isMolfError } from '@molf/protocol';
import type { AgentRunner } from '../agent/index.ts';
import type { ApprovalWatchers, UnattendedAsk } from '../approvals/index.ts';
import type { SessionEvents, SessionStore } from '../sessions/index.ts';
import type { JobDispatcher } from '../workers/job-dispatcher.ts';
import type { WorkerRegistry } from '../workers/worker-registry.ts';
import type { CronFire, CronFireResult } from './cron-scheduler.ts';
import { heartbeatPrompt, isEmptyChecklist, watchHeartbeatAnswer } from './heartbeat.ts';

/** How long a heartbeat waits for the worker's HEARTBEAT.md. */
const HEARTBEAT_READ_TIMEOUT_MS = 10_000;

/** How a job names itself in a denial and a session: `the cron job "nightly tests" (cj_…)`. */
function describeRunner(job: Pick<CronJob, 'name' | 'jobId'>): string {
  return `the cron job "${job.name}" (${job.jobId})`;
}

/**
 * What a run of the job does with a tool call that asks (its `onAsk`): asked of the people following
 * the session's approvals here, denied at once or after a wait while nobody is.
 */
export function cronUnattendedAsk(job: CronJob, sessionId: string, watchers: ApprovalWatchers): UnattendedAsk {
  return {
    policy: job.onAsk,
    waitMs: job.onAskWaitMs ?? DEFAULT_CRON_ON_ASK_WAIT_MS,
    runBy: describeRunner(job),
    watched: () => watchers.watching({ sessionId, workerId: job.workerId }),
  };
}

/** The name of a session made for one run: the job's name and the slot's time (UTC, to the minute). */
function runSessionName(job: CronJob, scheduledFor: Date): string {
  return `${job.name} · ${scheduledFor.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/**
 * Sends a job's prompt into its session the way a person's prompt goes in (queued behind a running
 * turn), marked with the job's id, with the job's `onAsk` policy for the turn's tool calls. A
 * worker offline or a full queue is worth retrying; a session that is gone is not.
 */
export function createCronFire(options: {
  sessions: SessionStore;
  events: SessionEvents;
  agent: AgentRunner;
  registry: WorkerRegistry;
  dispatcher: JobDispatcher;
  watchers: ApprovalWatchers;
}): CronFire {
  const { sessions, events, agent, registry, dispatcher, watchers } = options;

  /** The prompt of a heartbeat run from the worker's HEARTBEAT.md; a reason to skip it when there is nothing to check. */
  async function heartbeatText(job: CronJob): Promise<{ prompt: string } | { skip: string } | { fail: string }> {
    const answer = await dispatcher.request({
      workerId: job.workerId,
      request: { method: 'heartbeat/read', params: {} },
      timeoutMs: HEARTBEAT_READ_TIMEOUT_MS,
    });
    if (!answer.ok) return { fail: `cannot read HEARTBEAT.md: ${answer.message}` };
    const [file] = answer.result.files;
    if (file === undefined) return { skip: 'HEARTBEAT.md is absent' };
    if (isEmptyChecklist(file.text)) return { skip: 'HEARTBEAT.md has nothing to check' };
    return { prompt: heartbeatPrompt(file.text) };
  }

  return async (job, scheduledFor, { report }): Promise<CronFireResult> => {
    if (registry.get(job.workerId)?.state !== 'online') {
      return { outcome: 'failed', reason: `worker ${job.workerId} is offline`, retry: true };
    }
    // The prompt of the slot before still waits behind a long turn: another copy would only fill
    // the session's queue (and refuse the person's own prompts).
    const last = job.lastRun;
    if (
      last?.outcome === 'queued' &&
      last.sessionId !== undefined &&
      last.messageId !== undefined &&
      agent.isQueued(last.sessionId, last.messageId)
    ) {
      return {
        outcome: 'skipped',
        reason: `its prompt of ${last.scheduledFor} still waits in session ${last.sessionId}`,
      };
    }
    let text = job.prompt;
    if (job.heartbeat === true) {
      const checklist = await heartbeatText(job);
      if ('skip' in checklist) return { outcome: 'skipped', reason: checklist.skip };
      if ('fail' in checklist) return { outcome: 'failed', reason: checklist.fail, retry: true };
      text = checklist.prompt;
    }
    let sessionId: string;
    if (job.target.type === 'session') {
      sessionId = job.target.sessionId;
      if ((await sessions.get(sessionId)) === undefined) {
        return {
          outcome: 'failed',
          reason: `its session ${sessionId} no longer exists: point the job at another session (or "new"), or remove it`,
          retry: false,
        };
      }
    } else {
      const created = await sessions.create({
        workerId: job.workerId,
        name: runSessionName(job, scheduledFor),
        ...(job.model === undefined ? {} : { model: job.model }),
      });
      sessionId = created.sessionId;
    }
    const promptId = randomUUID();
    const stopWatching =
      job.heartbeat === true
        ? watchHeartbeatAnswer(events, {
            sessionId,
            messageId: promptId,
            report: (found) => report({ sessionId, text: found }),
          })
        : undefined;
    try {
      const { messageId, queued } = await agent.prompt({
        sessionId,
        text,
        model: job.model,
        cronJobId: job.jobId,
        messageId: promptId,
        unattended: cronUnattendedAsk(job, sessionId, watchers),
      });
      return { outcome: queued ? 'queued' : 'started', sessionId, messageId };
    } catch (error) {
      stopWatching?.();
      const gone = isMolfError(error) && error.code === 'session_not_found';
      return { outcome: 'failed', reason: (error as Error).message, retry: !gone, sessionId };
    }
  };
}

import { randomUUID } from 'node:crypto';
import type { Logger } from '@molf/logging';
import {
  type Job,
  resolveCallTimeout,
  type ToolCallId,
  type ToolResult,
  toErrorResult,
  type WorkerId,
  type WorkerRequest,
} from '@molf/protocol';
import type { Database } from '../database/index.ts';
import { DEFAULT_DISPATCH_MARGIN_MS, type JobDispatcher, type RequestOutcome } from '../workers/job-dispatcher.ts';
import type { WorkerRegistry } from '../workers/worker-registry.ts';

/**
 * The channel of routed jobs. Payloads: `run workerId` (a job waits for the instance holding that
 * worker), `cancel jobId` (its asker gave up), `done jobId` (its outcome is stored).
 */
export const JOBS_CHANNEL = 'molf_worker_jobs';

/** How often missed announcements are made up for: unclaimed jobs, outcomes nobody was told of. */
const POLL_MS = 2_000;
/** How long a finished job is kept, for a server that takes over its turn to find. */
const KEEP_FINISHED = '1 hour';

type Routed = { kind: 'call'; job: Job } | { kind: 'request'; request: WorkerRequest; timeoutMs: number };

type JobRow = { job_id: string; worker_id: string; kind: string; job: string };

type Waiter = { workerId: WorkerId; settle: (outcome: string) => void };

/**
 * The job dispatcher of a server sharing a database with others. Every tool call is a row of
 * `worker_jobs`: the instance running the turn (the requester) writes it; the instance holding the
 * worker's socket (the runner; often the same one) claims it with a conditional update, sends it to
 * the worker through its own dispatcher, and stores the outcome, announced with `NOTIFY`. A result
 * the worker delivers to any instance is stored before it is acknowledged; a worker that connects
 * to another instance has its open jobs claimed there and asked again by id (the worker runs an id
 * once, and delivers a kept result again); a server taking over a cut-off turn finds its calls by
 * the model's call id. Requests (reads of instructions, skills, paths) are routed the same way when
 * the worker is elsewhere, and go straight to it when it is here.
 */
export async function openRoutedJobDispatcher(options: {
  local: JobDispatcher;
  registry: WorkerRegistry;
  database: Database;
  instanceId: string;
  logger: Logger;
  marginMs?: number;
}): Promise<JobDispatcher> {
  const { local, registry, logger, instanceId } = options;
  const { sql } = options.database;
  const marginMs = options.marginMs ?? DEFAULT_DISPATCH_MARGIN_MS;
  const waiters = new Map<string, Waiter>();
  const runningHere = new Map<string, AbortController>();
  /** Workers connected here, whose jobs this instance claims. */
  const hereWorkers = new Set<WorkerId>();
  let closed = false;

  const notify = (payload: string) => sql`select pg_notify(${JOBS_CHANNEL}, ${payload})`;

  function warn(what: string, extra: Record<string, unknown> = {}) {
    return (error: unknown) => logger.warn({ err: error, ...extra }, what);
  }

  /** Stores a job's outcome unless it has one; only the runner's own claim counts when `asRunner`. */
  async function finish(jobId: string, outcome: unknown, asRunner: boolean): Promise<boolean> {
    const text = JSON.stringify(outcome);
    const rows = asRunner
      ? await sql`update worker_jobs set outcome = ${text}, finished_at = now()
          where job_id = ${jobId} and outcome is null and runner = ${instanceId} returning 1`
      : await sql`update worker_jobs set outcome = ${text}, finished_at = now()
          where job_id = ${jobId} and outcome is null returning 1`;
    if (rows.length === 0) return false;
    waiters.get(jobId)?.settle(text);
    // Also for another server that took over the turn meanwhile (see `reattach`).
    await notify(`done ${jobId}`);
    return true;
  }

  /** Runs claimed jobs on this instance's link to their worker and stores each outcome. */
  function run(rows: readonly JobRow[]): void {
    for (const row of rows) {
      // Already running here (the worker left and came back): its first run still waits for it.
      if (runningHere.has(row.job_id)) continue;
      const controller = new AbortController();
      runningHere.set(row.job_id, controller);
      const routed = JSON.parse(row.job) as Routed;
      const workerId = row.worker_id as WorkerId;
      const outcome: Promise<unknown> =
        routed.kind === 'call'
          ? local.dispatch({
              workerId,
              toolName: routed.job.toolName,
              args: routed.job.args,
              timeoutMs: routed.job.timeoutMs,
              toolCallId: routed.job.toolCallId,
              signal: controller.signal,
              ...(routed.job.sessionId === undefined ? {} : { sessionId: routed.job.sessionId }),
              ...(routed.job.readRules === undefined ? {} : { readRules: routed.job.readRules }),
              ...(routed.job.approvedPaths === undefined ? {} : { approvedPaths: routed.job.approvedPaths }),
            })
          : local.request({
              workerId,
              request: routed.request,
              timeoutMs: routed.timeoutMs,
              signal: controller.signal,
            });
      void outcome
        .then(async (value) => {
          runningHere.delete(row.job_id);
          // A server shutting down leaves its jobs to the instance its worker connects to next.
          if (closed) return;
          await finish(row.job_id, value, true);
        })
        .catch(warn('cannot store the outcome of a job', { jobId: row.job_id }));
    }
  }

  /** Claims the unclaimed jobs of a worker connected here. */
  async function claim(workerId: WorkerId): Promise<void> {
    const workerInstance = registry.connectedHere(workerId)?.instanceId;
    if (workerInstance === undefined || closed) return;
    const rows = await sql<JobRow[]>`
      update worker_jobs set runner = ${instanceId}, worker_instance = ${workerInstance}
      where worker_id = ${workerId} and outcome is null and runner is null and deadline_at > now()
      returning job_id, worker_id, kind, job`;
    run(rows);
  }

  /** Claims what announcements missed: one query finds the workers here with unclaimed jobs. */
  async function claimMissed(): Promise<void> {
    if (hereWorkers.size === 0) return;
    const rows = await sql<{ worker_id: WorkerId }[]>`
      select distinct worker_id from worker_jobs
      where worker_id = any(${[...hereWorkers]}::text[]) and outcome is null and runner is null
        and deadline_at > now()`;
    await Promise.all(rows.map((row) => claim(row.worker_id)));
  }

  /**
   * A worker connected here: its open jobs claimed elsewhere (it was connected there) are this
   * instance's now. Asked again by id, unless the worker is another process than the one that was
   * asked (then the outcome is unknown).
   */
  async function takeOver(workerId: WorkerId, workerInstance: string): Promise<void> {
    const rows = await sql<(JobRow & { previous: string | null })[]>`
      update worker_jobs j set runner = ${instanceId}, worker_instance = ${workerInstance}
      from (select job_id, worker_instance from worker_jobs
            where worker_id = ${workerId} and outcome is null and (runner is null or runner <> ${instanceId})
              and deadline_at > now()
            for update) old
      where j.job_id = old.job_id
      returning j.job_id, j.worker_id, j.kind, j.job, old.worker_instance as previous`;
    const again: JobRow[] = [];
    for (const row of rows) {
      if (row.previous !== null && row.previous !== workerInstance && row.kind === 'call') {
        await finish(
          row.job_id,
          toErrorResult(
            'worker_restarted',
            'The worker restarted while running this tool call; its outcome is unknown.',
          ),
          true,
        );
      } else {
        again.push(row);
      }
    }
    if (again.length > 0) logger.info({ workerId, jobs: again.length }, 'asking a worker again for its open jobs');
    run(again);
  }

  /** Waits for a job's outcome: stored by any instance, or decided here (abort, deadline). */
  function waitForOutcome(options: {
    jobId: string;
    workerId: WorkerId;
    deadlineMs: number;
    signal: AbortSignal | undefined;
    onAbort: () => unknown;
    onDeadline: () => unknown;
  }): Promise<string> {
    const { jobId } = options;
    return new Promise<string>((resolve) => {
      const settle = (outcome: string) => {
        if (waiters.get(jobId) !== waiter) return;
        waiters.delete(jobId);
        clearTimeout(timer);
        options.signal?.removeEventListener('abort', abort);
        resolve(outcome);
      };
      const giveUp = (outcome: unknown, reason: string) => {
        const text = JSON.stringify(outcome);
        settle(text);
        // Stored for anyone who asks later; the runner stops the call on the worker.
        sql`update worker_jobs set outcome = ${text}, finished_at = now() where job_id = ${jobId} and outcome is null`
          .then(() => notify(`cancel ${jobId}`))
          .catch(warn(`cannot record that a job was ${reason}`, { jobId }));
      };
      const waiter: Waiter = { workerId: options.workerId, settle };
      const abort = () => giveUp(options.onAbort(), 'cancelled');
      const timer = setTimeout(() => giveUp(options.onDeadline(), 'timed out'), options.deadlineMs);
      waiters.set(jobId, waiter);
      // Aborted while the job was being written: answered now.
      if (options.signal?.aborted === true) abort();
      else options.signal?.addEventListener('abort', abort, { once: true });
    });
  }

  /** Gets a job written by this instance to its worker: claimed here, or announced to the others. */
  async function kick(workerId: WorkerId): Promise<void> {
    if (hereWorkers.has(workerId)) await claim(workerId);
    else await notify(`run ${workerId}`);
  }

  const listening = await sql.listen(JOBS_CHANNEL, (payload) => {
    const [type, id] = payload.split(' ');
    if (id === undefined || closed) return;
    if (type === 'run' && hereWorkers.has(id as WorkerId)) {
      claim(id as WorkerId).catch(warn('cannot claim the jobs of a worker', { workerId: id }));
    } else if (type === 'cancel') {
      runningHere.get(id)?.abort();
    } else if (type === 'done' && waiters.has(id)) {
      readOutcomes([id]).catch(warn('cannot read the outcome of a job', { jobId: id }));
    }
  });

  async function readOutcomes(jobIds: readonly string[]): Promise<void> {
    const rows = await sql<{ job_id: string; outcome: string }[]>`
      select job_id, outcome from worker_jobs where job_id = any(${jobIds}::text[]) and outcome is not null`;
    for (const row of rows) waiters.get(row.job_id)?.settle(row.outcome);
  }

  let polls = 0;
  const poll = setInterval(() => {
    if (closed) return;
    polls += 1;
    const work = [
      claimMissed(),
      waiters.size === 0 ? Promise.resolve() : readOutcomes([...waiters.keys()]),
      polls % 30 === 0
        ? sql`delete from worker_jobs
            where finished_at < now() - ${KEEP_FINISHED}::interval or deadline_at < now() - ${KEEP_FINISHED}::interval`
        : Promise.resolve(),
    ];
    Promise.all(work).catch(() => undefined);
  }, POLL_MS);
  poll.unref();

  /** Writes a job and waits for its outcome; undefined when the id is taken. */
  async function ask(options: {
    jobId: string;
    workerId: WorkerId;
    routed: Routed;
    sessionId: string | undefined;
    step: { stepId: string; sessionToolCallId: string } | undefined;
    deadlineMs: number;
    signal: AbortSignal | undefined;
    onAbort: () => unknown;
    onDeadline: () => unknown;
  }): Promise<string | undefined> {
    const written = await sql`
      insert into worker_jobs (job_id, worker_id, kind, session_id, step_id, session_tool_call_id, job, requester,
        deadline_at)
      values (${options.jobId}, ${options.workerId}, ${options.routed.kind}, ${options.sessionId ?? null},
        ${options.step?.stepId ?? null}, ${options.step?.sessionToolCallId ?? null},
        ${JSON.stringify(options.routed)}, ${instanceId},
        now() + ${`${options.deadlineMs} milliseconds`}::interval)
      on conflict (job_id) do nothing returning 1`;
    if (written.length === 0) return undefined;
    const outcome = waitForOutcome(options);
    await kick(options.workerId);
    return outcome;
  }

  function unreachable(error: unknown): ToolResult {
    logger.warn({ err: error }, 'cannot route a job through the database');
    return toErrorResult('internal', `The call was not run: ${(error as Error).message}`);
  }

  return {
    async dispatch(call) {
      const { workerId, toolName, args, signal } = call;
      const registration = registry.registration(workerId);
      // Offline, unknown or cancelled already: the local dispatcher says so in its words.
      if (registration === undefined || signal?.aborted === true || closed) return local.dispatch(call);
      if (!registration.tools.some((tool) => tool.name === toolName)) return local.dispatch(call);
      const timeoutMs = call.timeoutMs ?? resolveCallTimeout(toolName, args);
      const toolCallId = call.toolCallId ?? (randomUUID() as ToolCallId);
      const job: Job = {
        toolCallId,
        toolName,
        args,
        timeoutMs,
        ...(call.sessionId === undefined ? {} : { sessionId: call.sessionId }),
        ...(call.readRules === undefined ? {} : { readRules: call.readRules }),
        ...(call.approvedPaths === undefined ? {} : { approvedPaths: call.approvedPaths }),
      };
      try {
        const outcome = await ask({
          jobId: toolCallId,
          workerId,
          routed: { kind: 'call', job },
          sessionId: call.sessionId,
          step: call.step,
          // The runner cancels at the call's deadline; this is for a runner that is gone.
          deadlineMs: timeoutMs + 2 * marginMs,
          signal,
          onAbort: () => toErrorResult('cancelled', 'The tool call was cancelled.'),
          onDeadline: () =>
            toErrorResult(
              'timeout',
              `The tool "${toolName}" did not finish within ${Math.round(timeoutMs / 1000)} s and was cancelled.`,
            ),
        });
        if (outcome === undefined) {
          return toErrorResult(
            'invalid_arguments',
            `Tool call id ${toolCallId} is still in use on the worker; use a new id.`,
          );
        }
        return JSON.parse(outcome) as ToolResult;
      } catch (error) {
        return unreachable(error);
      }
    },

    async request(request) {
      const { workerId, signal } = request;
      // Requests are short reads: straight to a worker connected here, routed only to one elsewhere.
      if (registry.connectedHere(workerId) !== undefined || registry.registration(workerId) === undefined || closed) {
        return local.request(request);
      }
      if (signal?.aborted === true) return local.request(request);
      type Outcome = RequestOutcome<typeof request.request.method>;
      const fail = (errorKind: 'cancelled' | 'timeout', message: string): Outcome => ({
        ok: false,
        errorKind,
        message,
      });
      try {
        const outcome = await ask({
          jobId: `rq_${randomUUID()}`,
          workerId,
          routed: { kind: 'request', request: request.request, timeoutMs: request.timeoutMs },
          sessionId: undefined,
          step: undefined,
          deadlineMs: request.timeoutMs + 2 * marginMs,
          signal,
          onAbort: () => fail('cancelled', 'The request was cancelled.'),
          onDeadline: () =>
            fail(
              'timeout',
              `The worker did not answer ${request.request.method} within ${Math.round(request.timeoutMs / 1000)} s.`,
            ),
        });
        return JSON.parse(outcome as string) as Outcome;
      } catch (error) {
        return { ok: false, errorKind: 'internal', message: unreachable(error).error ?? 'internal' };
      }
    },

    async reattach({ sessionId, step, signal }) {
      const [row] = await sql<
        {
          job_id: string;
          worker_id: string;
          job: string;
          outcome: string | null;
          runner: string | null;
          remaining_ms: number;
        }[]
      >`
        update worker_jobs set requester = ${instanceId}
        where job_id = (select job_id from worker_jobs
          where session_id = ${sessionId} and step_id = ${step.stepId}
            and session_tool_call_id = ${step.sessionToolCallId} and kind = 'call'
          order by created_at desc limit 1)
        returning job_id, worker_id, job, outcome, runner,
          greatest(0, extract(epoch from deadline_at - now()) * 1000)::integer as remaining_ms`;
      if (row === undefined) return undefined;
      if (row.outcome !== null) return JSON.parse(row.outcome) as ToolResult;
      const routed = JSON.parse(row.job) as Extract<Routed, { kind: 'call' }>;
      const workerId = row.worker_id as WorkerId;
      const outcome = waitForOutcome({
        jobId: row.job_id,
        workerId,
        // What is left of the call's time: a call whose time is up is answered so at once.
        deadlineMs: row.remaining_ms,
        signal,
        onAbort: () => toErrorResult('cancelled', 'The tool call was cancelled.'),
        onDeadline: () =>
          toErrorResult(
            'timeout',
            `The tool "${routed.job.toolName}" did not finish within ${Math.round(routed.job.timeoutMs / 1000)} s and was cancelled.`,
          ),
      });
      // Stored meanwhile, or never claimed (its asker died at once): looked at again.
      if (row.runner === null) await kick(workerId);
      await readOutcomes([row.job_id]);
      return JSON.parse(await outcome) as ToolResult;
    },

    async acceptResult(result) {
      // Stored first, for whichever instance waits: only then may the worker forget it.
      const stored = await sql`
        update worker_jobs set outcome = ${JSON.stringify(result.result)}, finished_at = now()
        where job_id = ${result.toolCallId} and worker_id = ${result.workerId} and kind = 'call' and outcome is null
        returning 1`;
      if (stored.length > 0) {
        const waiter = waiters.get(result.toolCallId);
        if (waiter !== undefined) waiter.settle(JSON.stringify(result.result));
        else await notify(`done ${result.toolCallId}`).catch(warn('cannot announce a job outcome'));
      }
      const accepted = await local.acceptResult(result);
      return accepted || stored.length > 0;
    },

    acceptResponse: (response) => local.acceptResponse(response),
    stream: (options) => local.stream(options),

    onRegistered(registered) {
      local.onRegistered(registered);
      hereWorkers.add(registered.workerId);
      takeOver(registered.workerId, registered.instanceId).catch(
        warn('cannot take over the jobs of a worker', { workerId: registered.workerId }),
      );
    },

    onOffline(workerId) {
      hereWorkers.delete(workerId);
      local.onOffline(workerId);
    },

    close() {
      closed = true;
      clearInterval(poll);
      void listening.unlisten().catch(() => undefined);
      const shutdown = JSON.stringify(toErrorResult('cancelled', 'The server is shutting down.'));
      for (const waiter of [...waiters.values()]) waiter.settle(shutdown);
      local.close();
    },

    pendingCount: (workerId) => local.pendingCount(workerId),
  };
}

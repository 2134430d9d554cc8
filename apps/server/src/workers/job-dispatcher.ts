import { randomBytes, randomUUID } from 'node:crypto';
import type { Logger } from '@molf/logging';
import {
  type Job,
  type JobMessage,
  resolveCallTimeout,
  type ToolCallId,
  type ToolErrorKind,
  type ToolResult,
  toErrorResult,
  WORKER_REQUEST_RESULTS,
  type WorkerId,
  type WorkerRequest,
  type WorkerRequestMethod,
  type WorkerRequestResult,
  type WorkerResponse,
} from '@molf/protocol';
import { type TrackedEnvelope, tracked } from '@trpc/server';
import { createWorkerOutbox, type OutboxEntry, type WorkerOutbox } from './worker-outbox.ts';
import type { WorkerLease, WorkerRegistry } from './worker-registry.ts';

/** Extra time the server grants a call beyond its own timeout before it gives up and cancels. */
export const DEFAULT_DISPATCH_MARGIN_MS = 5_000;

/**
 * How long a worker that went offline may take to come back before its pending calls fail: a
 * reconnect (backoff up to 30 s) finds them waiting, a worker that is gone does not hold a turn
 * until each call's own deadline.
 */
export const DEFAULT_OFFLINE_WINDOW_MS = 60_000;

export type DispatchOptions = {
  workerId: WorkerId;
  toolName: string;
  args: Record<string, unknown>;
  /**
   * The call's own timeout; the server's deadline is this plus the dispatch margin.
   * Default: the tool's timeout argument if it has one (`shell_exec.timeout`), else 120 s.
   */
  timeoutMs?: number;
  /** Defaults to a random id. */
  toolCallId?: ToolCallId;
  /** Aborting cancels the call on the worker. */
  signal?: AbortSignal;
  /** The session the call belongs to; the worker keeps per-session state (files read) by it. */
  sessionId?: string;
  /**
   * The model step that made the call (its assistant message's id) and the call's id there (the
   * model's): with several servers on one database, the server that takes over a cut-off turn
   * finds the call again by them (see `reattach`).
   */
  step?: { stepId: string; sessionToolCallId: string };
  /** read_file rules a tool that reads many files applies to each (see `Job.readRules`). */
  readRules?: Job['readRules'];
  /** Where each path argument led when the gate judged the call (see `Job.approvedPaths`). */
  approvedPaths?: Job['approvedPaths'];
};

/** How a pending call or request ends: the worker's answer, or a failure the server decided. */
type Settlement =
  | { type: 'answer'; value: ToolResult | WorkerResponse }
  | { type: 'failure'; kind: ToolErrorKind; message: string };

/** The answer to a worker request: its method's result, or why there is none. */
export type RequestOutcome<M extends WorkerRequestMethod> =
  | { ok: true; result: WorkerRequestResult<M> }
  | { ok: false; errorKind: ToolErrorKind; message: string };

type Pending = {
  /** A tool call's id, or a request's (one id space: both are keys of the outbox). */
  toolCallId: ToolCallId;
  kind: 'call' | 'request';
  settle: (settlement: Settlement) => void;
  timer: NodeJS.Timeout;
  /** The worker instance the call was delivered to, once it was. */
  deliveredTo: string | undefined;
  /** The queued call message, finished when the call settles. */
  entry: OutboxEntry | undefined;
  cleanup: () => void;
};

type Outbox = {
  queue: WorkerOutbox;
  pending: Map<ToolCallId, Pending>;
  /**
   * Cancels kept for replay until the worker answers the cancelled call: a cancel written into a
   * half-open socket is otherwise lost, and the cancelled tool runs on.
   */
  cancels: Map<ToolCallId, { entry: OutboxEntry; expiry: NodeJS.Timeout }>;
};

/** How long an unanswered cancel is kept for replay. */
const CANCEL_RETENTION_MS = 10 * 60_000;

export type JobDispatcher = {
  /** Runs one tool call on a worker. Never throws for run-time failures: they come back as results. */
  dispatch(options: DispatchOptions): Promise<ToolResult>;
  /**
   * Sends a worker one request of the server's own and waits for its typed answer. Never throws:
   * an offline worker, a timeout, an abort or an answer of the wrong kind come back as `ok: false`.
   */
  request<M extends WorkerRequestMethod>(options: {
    workerId: WorkerId;
    request: Extract<WorkerRequest, { method: M }>;
    /** The worker's own deadline; the server waits this plus the dispatch margin. */
    timeoutMs: number;
    signal?: AbortSignal;
  }): Promise<RequestOutcome<M>>;
  /**
   * The outcome of a call asked before this server took over its turn (found by the session, the
   * step and the model's call id), waited for if it is still running; undefined when no worker was asked
   * (then it never ran). Only servers sharing a database keep calls across a takeover.
   */
  reattach(options: {
    sessionId: string;
    step: { stepId: string; sessionToolCallId: string };
    signal?: AbortSignal;
  }): Promise<ToolResult | undefined>;
  /**
   * A worker's result arrives; false when nobody waits for it any more. Resolved once the result
   * is stored where every server finds it (with a database), so the worker may forget it.
   */
  acceptResult(options: { workerId: WorkerId; toolCallId: ToolCallId; result: ToolResult }): boolean | Promise<boolean>;
  /** A worker's answer to a request arrives; false when nobody waits for it any more. */
  acceptResponse(options: { workerId: WorkerId; requestId: ToolCallId; response: WorkerResponse }): boolean;
  /** The message stream of one registration, resuming after `lastEventId`. */
  stream(options: {
    lease: WorkerLease;
    lastEventId: string | null | undefined;
    signal: AbortSignal | undefined;
  }): AsyncGenerator<TrackedEnvelope<JobMessage>>;
  /** Called on a new registration: a new worker instance can't finish its predecessor's calls. */
  onRegistered(options: { workerId: WorkerId; instanceId: string; previousInstanceId: string | undefined }): void;
  /**
   * Called when a worker's link is gone: unless it registers again within the offline window, its
   * pending calls and requests fail as `worker_offline`.
   */
  onOffline(workerId: WorkerId): void;
  /** Fails every pending call (server shutdown). */
  close(): void;
  pendingCount(workerId?: WorkerId): number;
};

export function createJobDispatcher(options: {
  registry: WorkerRegistry;
  logger: Logger;
  serverVersion: string;
  marginMs?: number;
  /** Default {@link DEFAULT_OFFLINE_WINDOW_MS}. */
  offlineWindowMs?: number;
}): JobDispatcher {
  const marginMs = options.marginMs ?? DEFAULT_DISPATCH_MARGIN_MS;
  const offlineWindowMs = options.offlineWindowMs ?? DEFAULT_OFFLINE_WINDOW_MS;
  /** Workers that went offline, each with the timer that fails its calls if it stays away. */
  const offlineTimers = new Map<WorkerId, NodeJS.Timeout>();
  const { registry, logger } = options;
  /** Event ids carry the server's epoch, so ids from before a restart never skip new messages. */
  const epoch = randomBytes(4).toString('hex');
  const outboxes = new Map<WorkerId, Outbox>();
  let nextSeq = 1;

  function outboxOf(workerId: WorkerId): Outbox {
    let box = outboxes.get(workerId);
    if (box === undefined) {
      box = { queue: createWorkerOutbox(() => nextSeq++), pending: new Map(), cancels: new Map() };
      outboxes.set(workerId, box);
    }
    return box;
  }

  function settle(box: Outbox, toolCallId: ToolCallId, settlement: Settlement): boolean {
    const pending = box.pending.get(toolCallId);
    if (pending === undefined) return false;
    box.pending.delete(toolCallId);
    clearTimeout(pending.timer);
    pending.cleanup();
    if (pending.entry !== undefined) box.queue.finish(pending.entry);
    pending.settle(settlement);
    return true;
  }

  function failure(kind: ToolErrorKind, message: string): Settlement {
    return { type: 'failure', kind, message };
  }

  function cancel(box: Outbox, toolCallId: ToolCallId, reason: 'timeout' | 'aborted', settlement: Settlement): void {
    const pending = box.pending.get(toolCallId);
    const wasDelivered = pending?.deliveredTo !== undefined;
    if (!settle(box, toolCallId, settlement)) return;
    // A call the worker never saw needs no cancel; its queued message was finished with it.
    // Requests are never cancelled on the worker: they are short, and a late answer is dropped.
    if (!wasDelivered || pending?.kind !== 'call') return;
    forgetCancel(box, toolCallId);
    const entry = box.queue.append(toolCallId, { type: 'cancel', toolCallId, reason });
    const expiry = setTimeout(() => forgetCancel(box, toolCallId), CANCEL_RETENTION_MS);
    expiry.unref();
    box.cancels.set(toolCallId, { entry, expiry });
  }

  function forgetCancel(box: Outbox, toolCallId: ToolCallId): void {
    const kept = box.cancels.get(toolCallId);
    if (kept === undefined) return;
    clearTimeout(kept.expiry);
    box.queue.finish(kept.entry);
    box.cancels.delete(toolCallId);
  }

  function toEventId(seq: number): string {
    return `${epoch}:${seq}`;
  }

  function fromEventId(eventId: string | null | undefined): number {
    if (typeof eventId !== 'string') return 0;
    const [eventEpoch, seq] = eventId.split(':');
    const parsed = Number(seq);
    return eventEpoch === epoch && Number.isSafeInteger(parsed) && parsed > 0 ? parsed : 0;
  }

  return {
    dispatch({
      workerId,
      toolName,
      args,
      signal,
      sessionId,
      step: _step,
      readRules,
      approvedPaths,
      toolCallId = randomUUID() as ToolCallId,
      ...rest
    }) {
      const timeoutMs = rest.timeoutMs ?? resolveCallTimeout(toolName, args);
      const registration = registry.connectedHere(workerId);
      if (registration === undefined) {
        const known = registry.get(workerId) !== undefined;
        return Promise.resolve(
          known
            ? toErrorResult('worker_offline', `Worker ${workerId} is offline; the tool "${toolName}" was not run.`)
            : toErrorResult('worker_not_found', `No worker with id ${workerId} is registered.`),
        );
      }
      if (!registration.tools.some((tool) => tool.name === toolName)) {
        return Promise.resolve(
          toErrorResult(
            'tool_not_found',
            `Worker "${registration.name}" has no tool "${toolName}". Its tools: ${registration.tools.map((tool) => tool.name).join(', ')}.`,
          ),
        );
      }
      if (signal?.aborted) {
        return Promise.resolve(toErrorResult('cancelled', 'The tool call was cancelled before it started.'));
      }
      const box = outboxOf(workerId);
      // An id the worker may still hold (running, or cancelled but unanswered) can't be reused:
      // the old run's result would answer the new call.
      if (box.pending.has(toolCallId) || box.cancels.has(toolCallId)) {
        return Promise.resolve(
          toErrorResult('invalid_arguments', `Tool call id ${toolCallId} is still in use on the worker; use a new id.`),
        );
      }

      return new Promise<ToolResult>((resolve) => {
        const onAbort = () => cancel(box, toolCallId, 'aborted', failure('cancelled', 'The tool call was cancelled.'));
        signal?.addEventListener('abort', onAbort, { once: true });
        const deadlineMs = timeoutMs + marginMs;
        const timer = setTimeout(() => {
          logger.warn({ workerId, toolCallId, toolName, deadlineMs }, 'tool call passed its deadline; cancelling');
          cancel(
            box,
            toolCallId,
            'timeout',
            failure(
              'timeout',
              `The tool "${toolName}" did not finish within ${Math.round(timeoutMs / 1000)} s and was cancelled.`,
            ),
          );
        }, deadlineMs);
        const pending: Pending = {
          toolCallId,
          kind: 'call',
          settle: (settlement) =>
            resolve(
              settlement.type === 'failure'
                ? toErrorResult(settlement.kind, settlement.message)
                : (settlement.value as ToolResult),
            ),
          timer,
          deliveredTo: undefined,
          entry: undefined,
          cleanup: () => signal?.removeEventListener('abort', onAbort),
        };
        box.pending.set(toolCallId, pending);
        pending.entry = box.queue.append(toolCallId, {
          type: 'call',
          job: {
            toolCallId,
            toolName,
            args,
            timeoutMs,
            ...(sessionId === undefined ? {} : { sessionId }),
            ...(readRules === undefined ? {} : { readRules }),
            ...(approvedPaths === undefined ? {} : { approvedPaths }),
          },
        });
      });
    },

    request({ workerId, request, timeoutMs, signal }) {
      type Outcome = RequestOutcome<typeof request.method>;
      const fail = (errorKind: ToolErrorKind, message: string): Promise<Outcome> =>
        Promise.resolve({ ok: false, errorKind, message });
      if (registry.connectedHere(workerId) === undefined) {
        return registry.get(workerId) === undefined
          ? fail('worker_not_found', `No worker with id ${workerId} is registered.`)
          : fail('worker_offline', `Worker ${workerId} is offline.`);
      }
      if (signal?.aborted) return fail('cancelled', 'The request was cancelled before it was sent.');
      const box = outboxOf(workerId);
      const requestId = `rq_${randomUUID()}` as ToolCallId;
      return new Promise<Outcome>((resolve) => {
        const onAbort = () => cancel(box, requestId, 'aborted', failure('cancelled', 'The request was cancelled.'));
        signal?.addEventListener('abort', onAbort, { once: true });
        const timer = setTimeout(
          () =>
            cancel(
              box,
              requestId,
              'timeout',
              failure(
                'timeout',
                `The worker did not answer ${request.method} within ${Math.round(timeoutMs / 1000)} s.`,
              ),
            ),
          timeoutMs + marginMs,
        );
        const pending: Pending = {
          toolCallId: requestId,
          kind: 'request',
          settle(settlement) {
            if (settlement.type === 'failure') {
              resolve({ ok: false, errorKind: settlement.kind, message: settlement.message });
              return;
            }
            const response = settlement.value as WorkerResponse;
            if ('error' in response) {
              resolve({ ok: false, errorKind: response.error.kind ?? 'internal', message: response.error.message });
            } else if (response.method !== request.method) {
              resolve({
                ok: false,
                errorKind: 'internal',
                message: `the worker answered ${request.method} with a ${response.method} result`,
              });
            } else {
              // Checked again here: the RPC input schema checks it too, but callers in-process skip it.
              const parsed = WORKER_REQUEST_RESULTS[request.method].safeParse(response.result);
              resolve(
                parsed.success
                  ? ({ ok: true, result: parsed.data } as Outcome)
                  : { ok: false, errorKind: 'internal', message: `the worker's ${request.method} answer is malformed` },
              );
            }
          },
          timer,
          deliveredTo: undefined,
          entry: undefined,
          cleanup: () => signal?.removeEventListener('abort', onAbort),
        };
        box.pending.set(requestId, pending);
        pending.entry = box.queue.append(requestId, { type: 'request', requestId, timeoutMs, request });
      });
    },

    reattach: () => Promise.resolve(undefined),

    acceptResult({ workerId, toolCallId, result }) {
      const box = outboxes.get(workerId);
      if (box === undefined) return false;
      // The answer to a cancelled call means the worker got the cancel (or finished anyway).
      forgetCancel(box, toolCallId);
      if (box.pending.get(toolCallId)?.kind !== 'call') return false;
      return settle(box, toolCallId, { type: 'answer', value: result });
    },

    acceptResponse({ workerId, requestId, response }) {
      const box = outboxes.get(workerId);
      if (box?.pending.get(requestId)?.kind !== 'request') return false;
      return settle(box, requestId, { type: 'answer', value: response });
    },

    async *stream({ lease, lastEventId, signal }) {
      const box = outboxOf(lease.workerId);
      const stop = AbortSignal.any([lease.replaced, ...(signal === undefined ? [] : [signal])]);
      let cursor = fromEventId(lastEventId);
      yield tracked(toEventId(cursor), { type: 'registered', serverVersion: options.serverVersion });
      while (!stop.aborted) {
        for (const entry of box.queue.entriesAfter(cursor)) {
          cursor = entry.seq;
          if (entry.message.type === 'call' || entry.message.type === 'request') {
            const pending = box.pending.get(entry.toolCallId);
            if (pending !== undefined) pending.deliveredTo = lease.instanceId;
          }
          // Calls stay queued until they settle and cancels until they are answered, for replay.
          yield tracked(toEventId(entry.seq), entry.message);
          if (stop.aborted) break;
        }
        if (stop.aborted) break;
        await box.queue.nextAppend(stop);
      }
      if (lease.replaced.aborted && lease.replaced.reason !== lease.instanceId && !signal?.aborted) {
        // Tell the replaced process why its stream ends, so it stops instead of fighting back.
        yield tracked(toEventId(cursor), { type: 'replaced' });
      }
    },

    onRegistered({ workerId, instanceId, previousInstanceId }) {
      clearTimeout(offlineTimers.get(workerId));
      offlineTimers.delete(workerId);
      if (previousInstanceId === undefined || previousInstanceId === instanceId) return;
      const box = outboxes.get(workerId);
      if (box === undefined) return;
      // A new process knows none of the old one's calls: their cancels have nothing to stop.
      for (const toolCallId of [...box.cancels.keys()]) forgetCancel(box, toolCallId);
      for (const pending of [...box.pending.values()]) {
        if (pending.deliveredTo !== undefined && pending.deliveredTo !== instanceId) {
          settle(
            box,
            pending.toolCallId,
            failure('worker_restarted', 'The worker restarted while running this tool call; its outcome is unknown.'),
          );
        }
      }
    },

    onOffline(workerId) {
      clearTimeout(offlineTimers.get(workerId));
      const timer = setTimeout(() => {
        offlineTimers.delete(workerId);
        const box = outboxes.get(workerId);
        if (box === undefined || registry.connectedHere(workerId) !== undefined) return;
        const seconds = Math.round(offlineWindowMs / 1000);
        for (const pending of [...box.pending.values()]) {
          logger.warn({ workerId, toolCallId: pending.toolCallId }, 'worker stayed offline; failing its call');
          settle(
            box,
            pending.toolCallId,
            failure(
              'worker_offline',
              `Worker ${workerId} went offline and did not come back within ${seconds} s; ` +
                (pending.deliveredTo === undefined ? 'the call was not run.' : 'the outcome of the call is unknown.'),
            ),
          );
        }
      }, offlineWindowMs);
      timer.unref();
      offlineTimers.set(workerId, timer);
    },

    close() {
      for (const timer of offlineTimers.values()) clearTimeout(timer);
      offlineTimers.clear();
      for (const box of outboxes.values()) {
        for (const toolCallId of [...box.cancels.keys()]) forgetCancel(box, toolCallId);
        for (const toolCallId of [...box.pending.keys()]) {
          settle(box, toolCallId, failure('cancelled', 'The server is shutting down.'));
        }
      }
    },

    pendingCount(workerId) {
      if (workerId !== undefined) return outboxes.get(workerId)?.pending.size ?? 0;
      let total = 0;
      for (const box of outboxes.values()) total += box.pending.size;
      return total;
    },
  };
}

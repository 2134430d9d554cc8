import { randomUUID } from 'node:crypto';
import { basename } from 'node:path';
import { type BackoffOptions, createBackoff, createMolfClient } from '@molf/client';
import { createSilentLogger, type Logger } from '@molf/logging';
import {
  type Job,
  type JobMessage,
  MolfError,
  type ToolCallId,
  type ToolResult,
  toErrorResult,
  toToolDescriptor,
  type WorkerId,
  type WorkerRegistration,
} from '@molf/protocol';
import { echoTool } from './tools/echo.ts';
import { runToolCall } from './tools/run-tool-call.ts';
import type { ToolHandler } from './tools/tool-handler.ts';
import { validateWorkdir } from './validate-workdir.ts';
import { WORKER_VERSION } from './version.ts';
import { loadWorkerIdentity } from './worker-identity.ts';

export type WorkerConfig = {
  /** `ws://host:port` of the server. */
  serverUrl: string;
  /** A worker token. */
  token: string;
  /** The project directory tools run against; must exist and be readable and writable. */
  workdir: string;
  /** Label shown to clients. Default: the workdir's base name. */
  name?: string;
  /** Default: silent. */
  logger?: Logger;
  /** Reconnect delays. Default 1 s, ×2, max 30 s, ±25 % jitter. */
  reconnect?: BackoffOptions;
  /** Client-side keep-alive. Default ping every 30 s, 10 s pong timeout. */
  keepAlive?: { intervalMs?: number; pongTimeoutMs?: number };
  /** The tools this worker offers. Default: the built-in set. */
  tools?: ToolHandler[];
  /**
   * A result larger than this, serialised, is replaced by a `too_large` failure, so it can never
   * exceed the server's message limit (128 MiB). Default 96 MiB.
   */
  maxResultBytes?: number;
  /**
   * tRPC sends the calls made in one tick as one WebSocket message; result deliveries are held
   * back so that the bytes in flight stay under this. Default 32 MiB.
   */
  maxDeliveryBytesInFlight?: number;
};

export const DEFAULT_MAX_RESULT_BYTES = 96 * 1024 * 1024;

/**
 * The serialised size of a result. Serialising costs as much as sending, so it is done only when
 * the result could be near the limit: JSON spends at most 6 bytes on one UTF-16 unit (`\\uXXXX`).
 * Below that bound, the character count stands in for the size.
 */
function estimateResultBytes(result: ToolResult, limit: number): number {
  let characters = result.output.length + (result.error?.length ?? 0);
  for (const attachment of result.attachments ?? []) characters += attachment.data.length + attachment.mimeType.length;
  const overhead = 1_024;
  if (characters * 6 + overhead <= limit) return characters + overhead;
  return Buffer.byteLength(JSON.stringify(result));
}
export const DEFAULT_MAX_DELIVERY_BYTES_IN_FLIGHT = 32 * 1024 * 1024;

export type MolfWorker = AsyncDisposable & {
  workerId: WorkerId;
  instanceId: string;
  name: string;
  workdir: string;
  /**
   * Resolves at the first registration; rejects if the server refuses the credential before
   * that. While the server can't be reached it stays pending and the worker keeps retrying.
   */
  registered: Promise<void>;
  /** Registrations so far, running calls, results not yet delivered, cancels that reached a running call. */
  stats(): { registrations: number; running: number; undelivered: number; cancelled: number };
  close(): Promise<void>;
};

/** Retry delay for a result whose delivery failed while the link stayed up. */
const RESULT_RETRY_MS = 2_000;

export async function createWorker(config: WorkerConfig): Promise<MolfWorker> {
  const logger = config.logger ?? createSilentLogger();
  const workdir = await validateWorkdir(config.workdir);
  const workerId = await loadWorkerIdentity({ workdir, logger });
  const instanceId = randomUUID();
  const name = config.name ?? basename(workdir);
  const handlers = config.tools ?? [echoTool];
  const tools = new Map<string, ToolHandler>(handlers.map((handler) => [handler.definition.name, handler]));

  const registration: WorkerRegistration = {
    workerId,
    instanceId,
    name,
    workdir,
    tools: handlers.map((handler) => toToolDescriptor(handler.definition)),
    version: WORKER_VERSION,
  };

  const running = new Map<ToolCallId, AbortController>();
  /** Results not yet acknowledged by the server; they survive a dropped link. */
  const undelivered = new Map<ToolCallId, { result: ToolResult; bytes: number }>();
  const delivering = new Set<ToolCallId>();
  const maxResultBytes = config.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES;
  const maxBytesInFlight = config.maxDeliveryBytesInFlight ?? DEFAULT_MAX_DELIVERY_BYTES_IN_FLIGHT;
  let bytesInFlight = 0;
  let retryTimer: NodeJS.Timeout | undefined;
  let registrations = 0;
  let cancelled = 0;
  let closing = false;

  let resolveRegistered: () => void = () => {};
  let rejectRegistered: (error: Error) => void = () => {};
  const registered = new Promise<void>((resolvePromise, reject) => {
    resolveRegistered = resolvePromise;
    rejectRegistered = reject;
  });
  // A caller that never awaits `registered` must not crash the process on a rejection.
  registered.catch(() => {});

  const client = createMolfClient({
    url: config.serverUrl,
    token: config.token,
    retryDelayMs: createBackoff(config.reconnect),
    ...(config.keepAlive === undefined ? {} : { keepAlive: config.keepAlive }),
    onStatus(status) {
      if (closing) return;
      switch (status.type) {
        case 'open':
          logger.debug({ url: config.serverUrl }, 'connected to server');
          break;
        case 'closed':
          logger.warn({ url: config.serverUrl }, 'connection to server lost; reconnecting');
          break;
        case 'rejected':
          logger.error({ code: status.code }, `server refused the connection: ${status.message}`);
          if (registrations === 0) rejectRegistered(new MolfError(status.code, status.message));
          break;
        default:
          status satisfies never;
      }
    },
  });

  /** Queues a result for delivery, replacing one too large for the link by a failure that says so. */
  function keepResult(toolCallId: ToolCallId, result: ToolResult): void {
    const bytes = estimateResultBytes(result, maxResultBytes);
    if (bytes <= maxResultBytes) {
      undelivered.set(toolCallId, { result, bytes });
      return;
    }
    logger.warn({ toolCallId, bytes, maxResultBytes }, 'tool result too large to send; replaced by an error');
    const replacement = toErrorResult(
      'too_large',
      `The tool's result was ${bytes} bytes, more than the ${maxResultBytes} bytes a result may carry. ` +
        'Ask for less output (a line range, a narrower pattern) and try again.',
    );
    undelivered.set(toolCallId, { result: replacement, bytes: estimateResultBytes(replacement, maxResultBytes) });
  }

  function deliver(toolCallId: ToolCallId): void {
    const pending = undelivered.get(toolCallId);
    if (pending === undefined || delivering.has(toolCallId) || closing) return;
    // Large results wait their turn so one batched message stays well under the server's limit.
    if (bytesInFlight > 0 && bytesInFlight + pending.bytes > maxBytesInFlight) return;
    delivering.add(toolCallId);
    bytesInFlight += pending.bytes;
    void client.rpc.worker.result
      .mutate({ workerId, toolCallId, result: pending.result })
      .then(
        (ack) => {
          undelivered.delete(toolCallId);
          if (!ack.accepted) logger.info({ toolCallId }, 'server no longer waited for this result; dropped');
          return true;
        },
        (error: unknown) => {
          const code = (error as { data?: { code?: string } }).data?.code;
          if (code === 'invalid_input') {
            // Retrying the same bytes would fail forever; tell the model what happened instead.
            logger.error({ err: error, toolCallId }, 'server refused a tool result');
            keepResult(
              toolCallId,
              toErrorResult('internal', `The worker produced a result the server refused: ${(error as Error).message}`),
            );
          } else {
            logger.warn({ toolCallId, code }, 'result delivery failed; will retry');
          }
          return false;
        },
      )
      .then((delivered) => {
        delivering.delete(toolCallId);
        bytesInFlight -= pending.bytes;
        // Room in the byte budget: send what was held back. After a failure, wait before retrying.
        if (delivered) flushUndelivered();
        else scheduleRetry();
      });
  }

  function flushUndelivered(): void {
    for (const toolCallId of undelivered.keys()) deliver(toolCallId);
  }

  function scheduleRetry(): void {
    if (retryTimer !== undefined || closing) return;
    retryTimer = setTimeout(() => {
      retryTimer = undefined;
      flushUndelivered();
    }, RESULT_RETRY_MS);
    retryTimer.unref();
  }

  function startJob(job: Job): void {
    // A replayed call the worker already has (running or finished) must not run twice.
    if (running.has(job.toolCallId) || undelivered.has(job.toolCallId)) return;
    const controller = new AbortController();
    running.set(job.toolCallId, controller);
    logger.debug({ toolCallId: job.toolCallId, toolName: job.toolName }, 'tool call started');
    void runToolCall({ job, tools, workdir, controller, logger }).then((result) => {
      running.delete(job.toolCallId);
      keepResult(job.toolCallId, result);
      deliver(job.toolCallId);
    });
  }

  function handleMessage(message: JobMessage): void {
    switch (message.type) {
      case 'registered':
        registrations += 1;
        logger.info({ workerId, name, workdir }, registrations === 1 ? 'registered with server' : 're-registered');
        resolveRegistered();
        flushUndelivered();
        break;
      case 'call':
        startJob(message.job);
        break;
      case 'cancel':
        logger.debug({ toolCallId: message.toolCallId, reason: message.reason }, 'tool call cancelled');
        {
          const controller = running.get(message.toolCallId);
          if (controller !== undefined) {
            cancelled += 1;
            controller.abort(new MolfError('cancelled', `cancelled (${message.reason})`));
          }
        }
        break;
      default:
        message satisfies never;
    }
  }

  const subscription = client.rpc.worker.jobs.subscribe(
    { registration, lastEventId: null },
    {
      onData: (envelope) => handleMessage(envelope.data),
      onError(error) {
        logger.error({ err: error }, 'job subscription failed');
        if (registrations === 0) rejectRegistered(error);
      },
    },
  );

  async function close(): Promise<void> {
    if (closing) return;
    closing = true;
    clearTimeout(retryTimer);
    try {
      for (const controller of running.values()) controller.abort(new MolfError('cancelled', 'worker shutting down'));
      subscription.unsubscribe();
    } finally {
      await client.close();
      logger.info('worker stopped');
    }
  }

  return {
    workerId,
    instanceId,
    name,
    workdir,
    registered,
    stats: () => ({ registrations, running: running.size, undelivered: undelivered.size, cancelled }),
    close,
    [Symbol.asyncDispose]: close,
  };
}

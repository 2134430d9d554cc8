import { randomUUID } from 'node:crypto';
import { homedir } from 'node:os';
import { basename } from 'node:path';
import {
  type BackoffOptions,
  createBackoff,
  createMolfClient,
  normalizeFingerprint,
  probeServerCertificate,
  type ServerTrust,
} from '@molf/client/node';
import { createSilentLogger, type Logger } from '@molf/logging';
import {
  EMPTY_PROJECT_CATALOG,
  type Job,
  type JobMessage,
  MolfError,
  type ProjectCatalog,
  printableName,
  type ToolCallId,
  type ToolResult,
  toErrorResult,
  toToolDescriptor,
  type WorkerId,
  type WorkerRegistration,
  WorkerRegistrationSchema,
  type WorkerSandbox,
} from '@molf/protocol';
import { answerWorkerRequest } from './answer-worker-request.ts';
import { watchProjectCatalog } from './catalog/index.ts';
import { createServerMcpStartApprover } from './mcp/ask-server-for-mcp-start.ts';
import { type McpManager, type McpServerState, startMcpManager } from './mcp/mcp-manager.ts';
import { toMcpServerInfos } from './mcp/to-mcp-server-infos.ts';
import { prepareSandbox, type SandboxConfig } from './sandbox/index.ts';
import { builtinTools } from './tools/builtin-tools.ts';
import { createProcessReaper } from './tools/process-reaper.ts';
import { createReadTracker } from './tools/read-tracker.ts';
import { createPathPolicy } from './tools/resolve-tool-path.ts';
import { runToolCall } from './tools/run-tool-call.ts';
import type { ToolHandler } from './tools/tool-handler.ts';
import { validateWorkdir } from './validate-workdir.ts';
import { WORKER_VERSION } from './version.ts';
import { loadWorkerIdentity } from './worker-identity.ts';

export type WorkerConfig = {
  /** `ws://host:port` or `wss://host:port` of the server. */
  serverUrl: string;
  /** A worker token. */
  token: string;
  /**
   * How a `wss://` server is verified in every handshake, before the token is sent (a CA, a pinned
   * certificate). Default: the system's CAs.
   */
  trust?: ServerTrust;
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
  /** Directories outside the workdir that tools may also use (relative ones against the workdir). Default none. */
  extraRoots?: string[];
  /** Refuse write_file/edit_file on an existing file the session has not read. Default false. */
  requireReadBeforeWrite?: boolean;
  /** Start the MCP servers of `{workdir}/.mcp.json` and offer their tools. Default true. */
  mcp?: boolean;
  /**
   * Find the workdir's skills (`.agents/skills`, `.claude/skills`) and agents (`.agents/agents`,
   * `.claude/agents`), send them with the registration and again after every change. Default true.
   */
  catalog?: boolean;
  /**
   * The OS sandbox (bubblewrap) of `shell_exec` and stdio MCP servers, proven by a self-test at
   * start. Default `{ mode: 'off' }`.
   */
  sandbox?: SandboxConfig;
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

/** Results whose worst-case size is above this are serialised once to measure them exactly. */
const EXACT_SIZE_ABOVE_BYTES = 64 * 1024;

/**
 * A result's size in bytes, never less than the real one. Serialising costs about as much as
 * sending, so only results that could be large are measured: JSON spends at most 6 bytes on one
 * UTF-16 unit (`\\uXXXX`), which bounds the rest.
 */
function estimateResultBytes(result: ToolResult): number {
  let characters = result.output.length + (result.error?.length ?? 0);
  for (const attachment of result.attachments ?? []) characters += attachment.data.length + attachment.mimeType.length;
  const upperBound = characters * 6 + 1_024;
  // Small results are charged their upper bound; large ones are measured, because both the size
  // cap and the in-flight budget must hold for the real bytes (control characters take 6 each).
  return upperBound <= EXACT_SIZE_ABOVE_BYTES ? upperBound : Buffer.byteLength(JSON.stringify(result));
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
  /**
   * Resolves when `close()` finishes; rejects if the worker stops by itself: another process took
   * over its worker id (`worker_replaced`) or the server forbids the registration (`forbidden`).
   */
  stopped: Promise<void>;
  /** Registrations so far, running calls, results not yet delivered, cancels that reached a running call. */
  stats(): { registrations: number; running: number; undelivered: number; cancelled: number };
  /** The MCP servers of `.mcp.json` and their state. */
  mcpServers(): McpServerState[];
  /** The sandbox as the start-up self-test found it (also sent with every registration). */
  sandbox: WorkerSandbox;
  /** The latest snapshot of the workdir's skills and agents (empty when `catalog` is false). */
  catalog(): ProjectCatalog;
  close(): Promise<void>;
};

/** How long a closing worker waits for its cancelled calls to report. */
const CLOSE_GRACE_MS = 1_000;

/** Retry delay for a result whose delivery failed while the link stayed up. */
const RESULT_RETRY_MS = 2_000;

export async function createWorker(config: WorkerConfig): Promise<MolfWorker> {
  const logger = config.logger ?? createSilentLogger();
  const workdir = await validateWorkdir(config.workdir);
  const workerId = await loadWorkerIdentity({ workdir, logger });
  const reads = createReadTracker({ requireRead: config.requireReadBeforeWrite === true });
  const paths = await createPathPolicy({
    workdir,
    ...(config.extraRoots === undefined ? {} : { extraRoots: config.extraRoots }),
  });
  // Before anything runs: in mode `required` a sandbox that fails its self-test stops the start here.
  const sandbox = await prepareSandbox({ config: config.sandbox, workdir, env: process.env, logger });
  const reaper = createProcessReaper();
  const instanceId = randomUUID();
  // A directory's name may hold anything a file name can: shown on one line, it holds no control characters.
  const name = config.name ?? printableName(basename(workdir));
  const handlers = config.tools ?? builtinTools;
  const tools = new Map<string, ToolHandler>(handlers.map((handler) => [handler.definition.name, handler]));
  // The first snapshot goes with the first registration; later ones follow it (sendCatalog).
  const catalogWatcher =
    config.catalog === false
      ? undefined
      : await watchProjectCatalog({ workdir, logger, onChange: () => sendCatalog() });

  // Checked here, so a bad name or tool list is a clear error at start, not a refused subscription.
  const parsedRegistration = WorkerRegistrationSchema.safeParse({
    workerId,
    instanceId,
    name,
    workdir,
    tools: handlers.map((handler) => toToolDescriptor(handler.definition)),
    builtinTools: handlers.map((handler) => handler.definition.name),
    version: WORKER_VERSION,
    home: homedir(),
    sandbox: sandbox.status,
    ...(catalogWatcher === undefined ? {} : { catalog: catalogWatcher.current() }),
  });
  if (!parsedRegistration.success) {
    await catalogWatcher?.close();
    const issue = parsedRegistration.error.issues[0];
    throw new MolfError(
      'invalid_input',
      `invalid worker ${issue?.path.join('.') ?? 'registration'}: ${issue?.message}`,
      {
        field: issue?.path.join('.'),
      },
    );
  }
  let registration: WorkerRegistration = parsedRegistration.data;

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
  /** Set by close(): no new calls or subscriptions; results may still be delivered. */
  let stopping = false;
  /** Set at the end of close(): nothing more is sent. */
  let closing = false;
  /** Whether the connection is known to be down, so a closing worker doesn't wait in vain. */
  let linkDown = true;

  const registered = Promise.withResolvers<void>();
  /** Resolved and replaced at every registration, for what waits for the next one. */
  let nextRegistration = Promise.withResolvers<void>();
  const stopped = Promise.withResolvers<void>();
  // A caller that never awaits these must not crash the process on a rejection.
  registered.promise.catch(() => {});
  stopped.promise.catch(() => {});

  const client = createMolfClient({
    url: config.serverUrl,
    token: config.token,
    ...(config.trust === undefined ? {} : { trust: config.trust }),
    retryDelayMs: createBackoff(config.reconnect),
    ...(config.keepAlive === undefined ? {} : { keepAlive: config.keepAlive }),
    onStatus(status) {
      if (closing) return;
      switch (status.type) {
        case 'open':
          linkDown = false;
          break;
        case 'closed':
          linkDown = true;
          break;
        case 'rejected':
          if (registrations === 0) registered.reject(new MolfError(status.code, status.message));
          break;
        case 'untrusted':
          // Told by onChange, once; the worker retries, and a server that shows the trusted
          // certificate again gets it back.
          break;
        default:
          status satisfies never;
      }
    },
    // One line per change, not per attempt: a worker waiting for its server retries for hours.
    onChange(change) {
      if (closing) return;
      const url = config.serverUrl;
      switch (change.type) {
        case 'connected':
          logger.debug({ url }, change.again ? 'connected to the server again' : 'connected to the server');
          break;
        case 'lost':
          logger.warn({ url }, 'connection to the server lost; reconnecting until it answers');
          break;
        case 'unreachable':
          logger.warn({ url }, 'cannot reach the Molf server (is it running?); retrying until it answers');
          void tellWhyUnreachable(url);
          break;
        case 'refused':
          logger.error(
            { url, code: change.code },
            `server refused the connection: ${change.message}; check the server URL and the worker token ` +
              '(retrying until it accepts)',
          );
          break;
        case 'untrusted':
          void tellWhyUntrusted(url, change.message);
          break;
        default:
          change satisfies never;
      }
    },
  });

  /**
   * Why the server cannot be reached, when the port tells: a `ws://` URL whose port answers TLS (the
   * person meant `wss://`). Said once, at the first failure of a link. (A `wss://` server whose
   * certificate is refused is told by the client itself, as `untrusted`.)
   */
  async function tellWhyUnreachable(url: string): Promise<void> {
    if (!url.startsWith('ws://')) return;
    const secure = `wss://${url.slice('ws://'.length)}`;
    const probe = await probeServerCertificate(secure, { timeoutMs: 2_000 }).catch(() => undefined);
    if (probe?.type !== 'tls' || closing) return;
    logger.error({ url }, `the server at ${url} speaks TLS: start the worker with --server ${secure}`);
  }

  /**
   * Why the worker refused its server in the TLS handshake (it sent nothing, not its token). Under
   * a pin the refused certificate is fetched again to name both fingerprints, since a certificate
   * that is not the pinned one fails as one nobody vouches for, without saying which it was.
   */
  async function tellWhyUntrusted(url: string, message: string): Promise<void> {
    const retrying =
      'The worker sends it nothing and keeps retrying; it reads its trust at start, so restart it after re-pinning.';
    const pinned = config.trust?.type === 'pinned' ? normalizeFingerprint(config.trust.fingerprint256) : undefined;
    const probe =
      pinned === undefined ? undefined : await probeServerCertificate(url, { timeoutMs: 2_000 }).catch(() => undefined);
    if (closing) return;
    const shown = probe?.type === 'tls' ? normalizeFingerprint(probe.fingerprint256) : undefined;
    if (pinned === undefined || shown === undefined || shown === pinned) {
      logger.error({ url }, `${message} ${retrying}`);
      return;
    }
    logger.error(
      { url, pinned, shown },
      `the server shows a certificate that is not the pinned one (pinned: SHA-256 ${pinned}; shown: SHA-256 ${shown}). ` +
        'Nothing was sent. Either someone is in the middle, or the server has a new certificate: if it renewed it, ' +
        'check the fingerprint there (molf server --print-fingerprint), ' +
        `then run \`molf trust ${url} --fingerprint ${shown}\` here. ${retrying}`,
    );
  }

  /** Queues a result for delivery, replacing one too large for the link by a failure that says so. */
  function keepResult(toolCallId: ToolCallId, result: ToolResult): void {
    const bytes = estimateResultBytes(result);
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
    undelivered.set(toolCallId, { result: replacement, bytes: estimateResultBytes(replacement) });
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
    if (stopping) return;
    // A replayed call the worker already has (running or finished) must not run twice.
    if (running.has(job.toolCallId) || undelivered.has(job.toolCallId)) return;
    const controller = new AbortController();
    running.set(job.toolCallId, controller);
    logger.debug({ toolCallId: job.toolCallId, toolName: job.toolName }, 'tool call started');
    void runToolCall({
      job,
      tools,
      paths,
      reads,
      controller,
      sandbox: sandbox.runner,
      reaper,
      logger,
    }).then((result) => {
      running.delete(job.toolCallId);
      keepResult(job.toolCallId, result);
      deliver(job.toolCallId);
    });
  }

  /**
   * Answers one of the server's requests. A lost answer is not retried: the request stays queued
   * on the server until answered, so the stream replays it after a reconnect and it is answered again.
   */
  function answerRequest(message: Extract<JobMessage, { type: 'request' }>): void {
    if (stopping) return;
    const { requestId } = message;
    void answerWorkerRequest(message.request, {
      paths,
      reads,
      ...(catalogWatcher === undefined ? {} : { catalog: catalogWatcher.current }),
    })
      .then((response) => client.rpc.worker.respond.mutate({ workerId, requestId, response }))
      .then(
        (ack) => {
          if (!ack.accepted) logger.debug({ requestId }, 'server no longer waited for this answer; dropped');
        },
        (error: unknown) => logger.debug({ err: error, requestId }, 'answer to a server request not delivered'),
      );
  }

  function handleMessage(message: JobMessage): void {
    switch (message.type) {
      case 'registered':
        registrations += 1;
        lastSubscriptionError = undefined;
        resubscribeAttempt = 0;
        logger.info({ workerId, name, workdir }, registrations === 1 ? 'registered with server' : 're-registered');
        registered.resolve();
        nextRegistration.resolve();
        nextRegistration = Promise.withResolvers<void>();
        flushUndelivered();
        // tRPC re-sends the registration it subscribed with, from before the MCP tools came:
        // send the current tool set after every registration.
        if (registrations > 1 || mcpNames.size > 0) syncMcpTools();
        // The same for the skills and agents, also when they changed between subscribing and now.
        if (registrations > 1 || registration.catalog?.version !== subscribedCatalogVersion) sendCatalog();
        // And for the MCP servers' states.
        if (registrations > 1 || registration.mcp?.version !== subscribedMcpVersion) sendMcpServers();
        break;
      case 'call':
        startJob(message.job);
        break;
      case 'request':
        answerRequest(message);
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
      case 'replaced':
        fail(
          new MolfError(
            'worker_replaced',
            `another worker process registered with this worker id (${workerId}); stopping. ` +
              'If the project directory was copied, delete .molf/worker.json in the copy to give it its own id.',
          ),
        );
        break;
      default:
        message satisfies never;
    }
  }

  /** Last event id received, so a re-subscription resumes where the stream stopped. */
  let lastEventId: string | null = null;
  let resubscribeAttempt = 0;
  let resubscribeTimer: NodeJS.Timeout | undefined;
  const resubscribeDelay = createBackoff(config.reconnect);
  let subscription: { unsubscribe(): void } | undefined;

  /** Ends the worker for a reason it can't recover from. */
  function fail(error: MolfError): void {
    logger.error({ code: error.code }, error.message);
    registered.reject(error);
    stopped.reject(error);
    void close();
  }

  /**
   * MCP servers start after registration (a slow server never delays the worker); their tools
   * join the built-ins here and reach the server, now and in every later registration.
   */
  let mcp: McpManager | undefined;
  let mcpNames = new Set<string>();
  function syncMcpTools(): void {
    if (mcp === undefined || stopping) return;
    for (const toolName of mcpNames) tools.delete(toolName);
    const added = mcp.handlers();
    for (const handler of added) tools.set(handler.definition.name, handler);
    mcpNames = new Set(added.map((handler) => handler.definition.name));
    registration = {
      ...registration,
      tools: [...handlers, ...added].map((handler) => toToolDescriptor(handler.definition)),
    };
    // Before the first registration the server refuses a tool list (the id is not registered
    // yet: that was the warning on every first `molf up`); the registration handler sends it.
    if (registrations === 0) return;
    client.rpc.worker.tools.mutate({ workerId, tools: registration.tools }).catch((error: unknown) => {
      // A later registration carries the tools anyway.
      logger.warn({ err: error }, 'could not send the changed tool list to the server');
    });
  }
  /** The snapshot version in the registration the job subscription was made with (tRPC re-sends that one). */
  let subscribedCatalogVersion: number | undefined;
  /**
   * A new snapshot of the skills and agents: kept in the registration, so a new subscription
   * carries it, and sent now when registered (before that, the registration handler sends it).
   */
  function sendCatalog(): void {
    if (catalogWatcher === undefined || stopping) return;
    const catalog = catalogWatcher.current();
    registration = { ...registration, catalog };
    if (registrations === 0) return;
    client.rpc.worker.catalog.mutate({ workerId, instanceId, catalog }).then(
      ({ updated }) => {
        if (updated) return;
        logger.debug({ version: catalog.version }, 'server already had a newer skills and agents snapshot');
      },
      (error: unknown) => {
        // The next registration carries the snapshot anyway.
        logger.warn({ err: error }, 'could not send the changed skills and agents to the server');
      },
    );
  }

  /** The version of the newest MCP servers snapshot; each one this process makes has a higher one. */
  let mcpVersion = 0;
  /** The MCP snapshot version in the registration the job subscription was made with. */
  let subscribedMcpVersion: number | undefined;
  let mcpReport: NodeJS.Immediate | undefined;
  let mcpStates: McpServerState[] = [];
  /** The MCP servers changed state: one new snapshot for a burst of changes (servers starting together). */
  function scheduleMcpReport(states: McpServerState[]): void {
    mcpStates = states;
    if (stopping) return;
    mcpReport ??= setImmediate(() => {
      mcpReport = undefined;
      if (stopping) return;
      const servers = toMcpServerInfos(mcpStates);
      if (JSON.stringify(servers) === JSON.stringify(registration.mcp?.servers)) return;
      mcpVersion += 1;
      registration = { ...registration, mcp: { version: mcpVersion, servers } };
      sendMcpServers();
    });
  }
  /**
   * Sends the newest MCP servers snapshot (kept in the registration, so a new subscription carries
   * it too); before the first registration, the registration handler sends it.
   */
  function sendMcpServers(): void {
    const snapshot = registration.mcp;
    if (snapshot === undefined || stopping || registrations === 0) return;
    client.rpc.worker.mcpServers.mutate({ workerId, instanceId, mcp: snapshot }).catch((error: unknown) => {
      // The next registration carries the snapshot anyway.
      logger.warn({ err: error }, "could not send the MCP servers' states to the server");
    });
  }

  let mcpStarting: Promise<McpManager | undefined> = Promise.resolve(undefined);
  if (config.mcp !== false) {
    mcpStarting = startMcpManager({
      workdir,
      env: process.env,
      logger,
      reserved: handlers.map((handler) => handler.definition.name),
      sandbox: sandbox.mcpRunner,
      // A server new or changed in .mcp.json starts only once the server's approval gate allows it.
      approveStart: createServerMcpStartApprover({
        client,
        workerId,
        workdir,
        logger,
        registered: registered.promise,
        registrations: () => registrations,
        nextRegistration: () => nextRegistration.promise,
        isStopping: () => stopping,
      }),
      onToolsChanged: () => syncMcpTools(),
      onServersChanged: (states) => scheduleMcpReport(states),
    }).then(
      (manager) => {
        mcp = manager;
        syncMcpTools();
        // A project without .mcp.json reports no servers: clients then know there are none.
        scheduleMcpReport(manager.servers());
        return manager;
      },
      (error: unknown) => {
        logger.error({ err: error }, 'MCP servers could not be started');
        return undefined;
      },
    );
  }

  /** The code of the last job subscription failure logged, so a repeated one is not logged again. */
  let lastSubscriptionError: string | undefined;

  function subscribe(): void {
    subscribedCatalogVersion = registration.catalog?.version;
    subscribedMcpVersion = registration.mcp?.version;
    subscription = client.rpc.worker.jobs.subscribe(
      { registration, lastEventId },
      {
        onData(envelope) {
          lastEventId = envelope.id;
          handleMessage(envelope.data);
        },
        onError(error) {
          const code = (error as { data?: { code?: string } }).data?.code;
          if (code === 'forbidden' || code === 'invalid_input') {
            // Sending the same registration again can't succeed.
            fail(new MolfError(code, `the server refused this worker: ${error.message}`));
            return;
          }
          if (code === undefined || code === 'unauthorized') {
            // The connection itself was refused or dropped (no answer of the server's own): the
            // link's state line already said so once.
            logger.debug({ err: error, code }, 'job subscription ended with the connection; subscribing again');
          } else if (code !== lastSubscriptionError) {
            // Once per kind of failure, not once per attempt.
            lastSubscriptionError = code;
            logger.error({ err: error, code }, 'job subscription failed; subscribing again');
          } else {
            logger.debug({ err: error, code }, 'job subscription failed again; subscribing again');
          }
          resubscribeLater();
        },
        onComplete() {
          // The server ended the stream without saying why: register again.
          resubscribeLater();
        },
      },
    );
  }

  function resubscribeLater(): void {
    if (stopping || resubscribeTimer !== undefined) return;
    subscription?.unsubscribe();
    resubscribeTimer = setTimeout(() => {
      resubscribeTimer = undefined;
      if (!stopping) subscribe();
    }, resubscribeDelay(resubscribeAttempt++));
  }

  subscribe();

  let closed: Promise<void> | undefined;

  function close(): Promise<void> {
    closed ??= (async () => {
      // Stopping: no new calls, but the cancelled ones may still report, so the server learns
      // now that they ended instead of waiting for their deadlines.
      stopping = true;
      clearTimeout(resubscribeTimer);
      clearImmediate(mcpReport);
      try {
        subscription?.unsubscribe();
        for (const controller of running.values()) controller.abort(new MolfError('cancelled', 'worker shutting down'));
        await catalogWatcher?.close();
        // MCP children end with the worker (stdin closed, SIGTERM, then SIGKILL), also mid-start.
        await (await mcpStarting)?.close();
        const deadline = Date.now() + CLOSE_GRACE_MS;
        while ((running.size > 0 || undelivered.size > 0) && Date.now() < deadline && !linkDown) {
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
      } finally {
        closing = true;
        // Background children of finished commands end with the worker, as on a crash.
        reaper.close();
        clearTimeout(retryTimer);
        await client.close();
        logger.info('worker stopped');
        stopped.resolve();
      }
    })();
    return closed;
  }

  return {
    workerId,
    instanceId,
    name,
    workdir,
    registered: registered.promise,
    stopped: stopped.promise,
    stats: () => ({ registrations, running: running.size, undelivered: undelivered.size, cancelled }),
    mcpServers: () => mcp?.servers() ?? [],
    sandbox: sandbox.status,
    catalog: () => catalogWatcher?.current() ?? EMPTY_PROJECT_CATALOG,
    close,
    [Symbol.asyncDispose]: close,
  };
}

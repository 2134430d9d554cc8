import { realpath } from 'node:fs/promises';
import { createSilentLogger, type Logger } from '@molf/logging';
import { createPermissionEngine, toReadRules } from '@molf/permissions';
import { type Kind, MolfError, type WorkerId } from '@molf/protocol';
import {
  type AgentDirectory,
  type AgentRunner,
  type AgentSettings,
  createAgentDirectory,
  createAgentRunner,
  createProjectInstructions,
  type TurnServices,
  toTurnLimits,
} from '../agent/index.ts';
import {
  type ApprovalGate,
  type ApprovalWatchers,
  createApprovalGate,
  createApprovalWatchers,
  createGrantService,
  createPermissionsStore,
  createSessionGrants,
  createWorkerRulesWatch,
  type GrantService,
  openFileAuditLog,
  openPostgresAuditLog,
  type PermissionsStore,
} from '../approvals/index.ts';
import { type CredentialStore, GENERATED_LABEL, openCredentialStore } from '../auth/credential-store.ts';
import { closeInOrder } from '../close-in-order.ts';
import { createLocalApprovalAnswers } from '../cluster/approval-answers.ts';
import { cronSlotClaims } from '../cluster/claim-cron-slot.ts';
import { DEFAULT_LEASE_MS, type LeaseTimings, openPostgresSessionLeases } from '../cluster/postgres-session-leases.ts';
import { openPostgresWorkerPresence } from '../cluster/postgres-worker-presence.ts';
import { openRoutedJobDispatcher } from '../cluster/routed-job-dispatcher.ts';
import type { SessionLeases } from '../cluster/session-leases.ts';
import { openSharedApprovalAnswers } from '../cluster/shared-approval-answers.ts';
import {
  type CronClock,
  type CronScheduler,
  createCronFire,
  cronUnattendedAsk,
  openCronJobStore,
  startCronScheduler,
} from '../cron/index.ts';
import { ensureDataDir } from '../data-dir.ts';
import { type DataDirLock, lockDataDir } from '../data-dir-lock.ts';
import { type Database, openDatabase, type SchemaPolicy, watchDatabaseHealth } from '../database/index.ts';
import {
  type ApprovalLinks,
  type ApprovalNotifier,
  createApprovalLinks,
  DEFAULT_LINK_TTL_MINUTES,
  loadLinkKey,
  type NotifyOptions,
  startApprovalNotifier,
  startCronNotifier,
} from '../notify/index.ts';
import {
  createRedemptionLimiter,
  openPairingCodeStore,
  type PairingCodeStore,
  type RedemptionLimiter,
} from '../pairing/index.ts';
import { checkModel } from '../providers/check-model.ts';
import { listModels, RECENT_SESSIONS_FOR_MODELS } from '../providers/list-models.ts';
import { createModelResolver, type ProviderSettings } from '../providers/resolve-model.ts';
import { type AppRouter, createAppRouter } from '../rpc/router.ts';
import {
  createPostgresSessionStore,
  createSessionEvents,
  createToolResultFiles,
  openFileSessionStore,
  openPostgresEventLog,
  type SessionEvents,
  type SessionStore,
} from '../sessions/index.ts';
import { openFileStateDocuments, openPostgresStateDocuments, type StateDocuments } from '../state/index.ts';
import {
  createCronTool,
  createSkillTool,
  createTaskTool,
  createToolCallRunner,
  createToolCatalog,
  type ServerTool,
  type ToolCallRunner,
  type ToolCatalog,
} from '../tools/index.ts';
import { SERVER_VERSION } from '../version.ts';
import { createJobDispatcher, type JobDispatcher } from '../workers/job-dispatcher.ts';
import { createWorkerChanges } from '../workers/worker-changes.ts';
import { loadWorkerRegistry, type WorkerRegistry } from '../workers/worker-registry.ts';
import { checkCronJob } from './check-cron-job.ts';
import { forwardApprovalsToSessions } from './forward-approvals-to-sessions.ts';
import { type HealthReport, toWorkerHealth } from './health-report.ts';
import { createCatalogReporter } from './report-worker-catalog.ts';

/** With several servers: how long a worker that left one has to reconnect to any before its waiting approvals are denied. */
const WORKER_RETURN_MS = 20_000;

export type ServerServicesConfig = {
  /** Where credentials, worker state, sessions and the audit log live; created 0700 if missing. */
  dataDir: string;
  /** Fixed tokens, kept only in memory, accepted beside the stored ones: the client one is an admin. Default none. */
  tokens?: Partial<Record<Kind, string>>;
  /** Generate and store a token for each kind that has neither a fixed nor a stored one (an admin client, a worker). Default false. */
  generateMissingTokens?: boolean;
  /** Default: silent. */
  logger?: Logger;
  /** Extra time beyond a call's own timeout before the server cancels it. Default 5 s. */
  dispatchMarginMs?: number;
  /** How long a worker may stay offline before its pending calls fail. Default 60 s. */
  workerOfflineWindowMs?: number;
  /** Model providers: default model, keys, custom OpenAI-compatible endpoints, Ollama host. Default none. */
  models?: ProviderSettings;
  /** Agent loop limits (steps, queue, turn timeout). Default: the agent runner's. */
  agent?: AgentSettings;
  /** Tools the server runs itself, offered beside each worker's and gated like them. Default none. */
  serverTools?: readonly ServerTool[];
  /**
   * The clock permission rules are judged by (ms since the epoch): a grant past its expiry no
   * longer applies. Pairing codes expire, redemption limits count and credentials' last use is
   * noted by it too. Default `Date.now`; tests move it instead of waiting.
   */
  now?: () => number;
  /**
   * Approval requests sent to webhooks and ntfy topics, with one-time approve/deny links. Default
   * none (and with no targets, nothing is sent and no link answers).
   */
  notify?: NotifyOptions;
  /** Scheduled prompts: the shortest interval (default 1 min), the default zone, the clock (tests). */
  cron?: CronSettings;
  /**
   * Keep sessions and their events in PostgreSQL instead of the data directory, shared by every
   * instance given the same database. Default: none (files).
   */
  database?: DatabaseSettings;
};

export type DatabaseSettings = {
  /** `postgres://user:password@host:port/database`. */
  url: string;
  /** What to do with a schema older than this server's. Default `create`: refuse it (an empty database is set up). */
  schema?: SchemaPolicy;
  /** Connections in the pool. Default 10. */
  maxConnections?: number;
  /** How long a session's lease lasts and how often it is renewed (tests shorten them). Default 10 s, 3 s. */
  leases?: LeaseTimings;
};

export type CronSettings = {
  /** The shortest `every` interval and cron gap in ms. Default 60,000. */
  minIntervalMs?: number;
  /** The zone of cron expressions written without one. Default: the server's. */
  timezone?: string;
  /** Default: the system clock. */
  clock?: CronClock;
};

/**
 * Everything a Molf server does, without a socket or a port: what the transport serves, and what
 * tests, tools, cron or a second instance can call directly. Disposable.
 */
export type ServerServices = AsyncDisposable & {
  dataDir: string;
  /** Known workers and their state. */
  registry: WorkerRegistry;
  /** Sends calls and typed requests to workers over their job streams. */
  dispatcher: JobDispatcher;
  /** The stored credentials (the `credentials.json` document) and the fixed tokens. */
  credentials: CredentialStore;
  /** Tokens generated by this start (shown once, stored only as hashes). */
  generatedTokens: Partial<Record<Kind, string>>;
  /** One-time pairing codes (the `pairing-codes.json` document), made by admins, redeemed for credentials. */
  pairing: PairingCodeStore;
  /** The rate limits of pairing-code redemption, for the transport's `POST /api/pair`. */
  pairingLimiter: RedemptionLimiter;
  /** The approval gate: pending approvals, answers, explain. */
  gate: ApprovalGate;
  /** Each worker's `permissions.jsonc`. */
  permissions: PermissionsStore;
  /** The grants "always" answers saved in each worker's file: listed with their audit trail, revoked. */
  grants: GrantService;
  /** The people's clients following approvals now (an unattended run asks only when one does). */
  approvalWatchers: ApprovalWatchers;
  /** Each worker's tools merged with the server's own. */
  catalog: ToolCatalog;
  /** The subagents each worker's sessions can run. */
  agents: AgentDirectory;
  /** Runs a tool call the way the agent loop does: through the gate, then to the worker or server tool. */
  toolCalls: ToolCallRunner;
  /** Stored sessions and their messages. */
  sessions: SessionStore;
  /** The PostgreSQL database, when the server keeps its state there. */
  database: Database | undefined;
  /** The small state's documents: the data directory's files, or the database's rows. */
  documents: StateDocuments;
  /** With a database: which instance runs each session (this one's id among them). */
  leases: SessionLeases | undefined;
  /** Each session's live events, with sequence numbers. */
  events: SessionEvents;
  /** The agent loop: prompts, aborts. */
  agent: AgentRunner;
  /** Scheduled prompts (`cron` jobs), stored in the `cron/jobs.json` state document. */
  cron: CronScheduler;
  /** The tRPC router over these services, for a transport to serve. */
  router: AppRouter;
  /** The one-time approve/deny links of notifications, for a transport to serve; undefined without targets. */
  approvalLinks: ApprovalLinks | undefined;
  /** Sends approval requests to the notification targets; undefined without targets. */
  notifier: ApprovalNotifier | undefined;
  /** What `/healthz` reports: version, uptime, worker counts. */
  health(): HealthReport;
  /**
   * Ends the work in flight: aborts turns, cancels pending approvals and worker calls. A transport
   * calls it before closing its sockets so that clients still receive those outcomes. Idempotent;
   * `close()` calls it first.
   */
  stopWork(): Promise<void>;
  /** Stops the work in flight, then flushes and closes the stores. Idempotent. */
  close(): Promise<void>;
};

const MIN_FIXED_TOKEN_LENGTH = 16;

function validateFixedTokens(tokens: Partial<Record<Kind, string>>): void {
  for (const [kind, token] of Object.entries(tokens)) {
    if (token !== undefined && token.length < MIN_FIXED_TOKEN_LENGTH) {
      throw new MolfError(
        'config_invalid',
        `the fixed ${kind} token is too short: use at least ${MIN_FIXED_TOKEN_LENGTH} characters`,
      );
    }
  }
  if (tokens.client !== undefined && tokens.client === tokens.worker) {
    throw new MolfError(
      'config_invalid',
      'the client and worker tokens must differ: each kind needs its own credential',
    );
  }
}

async function generateMissingTokens(
  credentials: CredentialStore,
  fixedTokens: Partial<Record<Kind, string>>,
): Promise<Partial<Record<Kind, string>>> {
  const generated: Partial<Record<Kind, string>> = {};
  for (const kind of ['client', 'worker'] as const) {
    if (fixedTokens[kind] === undefined && !credentials.hasStored(kind)) {
      const role = kind === 'client' ? 'admin' : 'worker';
      const { token } = await credentials.create({ role, label: GENERATED_LABEL, origin: 'generated' });
      generated[kind] = token;
    }
  }
  return generated;
}

/** Builds every service of a server from its configuration; opens no socket and no port. */
export async function createServerServices(config: ServerServicesConfig): Promise<ServerServices> {
  const logger = config.logger ?? createSilentLogger();
  const fixedTokens = config.tokens ?? {};
  validateFixedTokens(fixedTokens);
  await ensureDataDir(config.dataDir);
  // Another server on the same data dir would write the same files beside this one's.
  const dataDirLock = await lockDataDir(config.dataDir, {
    holder: 'molf server',
    otherwise: 'give this one another --data-dir',
  });
  /** What a failed start must stop before the database closes (timers that renew rows). */
  const onFailure: Array<() => Promise<void>> = [];
  let database: Database | undefined;
  try {
    // A wrong URL, password or schema version stops the start here, before anything else is opened.
    database =
      config.database === undefined
        ? undefined
        : await openDatabase({
            url: config.database.url,
            logger,
            ...(config.database.schema === undefined ? {} : { schema: config.database.schema }),
            ...(config.database.maxConnections === undefined ? {} : { maxConnections: config.database.maxConnections }),
          });
    return await createServicesOver(config, { logger, fixedTokens, database, onFailure, dataDirLock });
  } catch (error) {
    for (const stop of onFailure) await stop().catch(() => undefined);
    await database?.close();
    await dataDirLock.release();
    throw error;
  }
}

async function createServicesOver(
  config: ServerServicesConfig,
  context: {
    logger: Logger;
    fixedTokens: Partial<Record<Kind, string>>;
    database: Database | undefined;
    onFailure: Array<() => Promise<void>>;
    dataDirLock: DataDirLock;
  },
): Promise<ServerServices> {
  const { logger, fixedTokens, database } = context;

  // Every step that can fail comes before anything that holds a file, a watcher or a timer, so a
  // failed start leaves nothing to close.
  const now = config.now ?? Date.now;
  /**
   * The small state (credentials, permissions, cron jobs…): files in the data dir, or rows of the
   * database. First, since the stores below keep theirs in it; what it holds on PostgreSQL (a
   * listening connection) ends with the database if a later step fails.
   */
  const documents: StateDocuments =
    database === undefined
      ? openFileStateDocuments({ dataDir: config.dataDir, logger })
      : await openPostgresStateDocuments({ database, logger });
  const credentials = openCredentialStore({
    documents,
    fixed: fixedTokens,
    recordUsage: true,
    now,
    logger,
  });
  const generatedTokens =
    config.generateMissingTokens === true ? await generateMissingTokens(credentials, fixedTokens) : {};
  const notify = config.notify !== undefined && config.notify.targets.length > 0 ? config.notify : undefined;
  const linkKey = notify === undefined ? undefined : await loadLinkKey(documents);
  // With a database: which instance runs each session, and where each worker is connected.
  const leases =
    database === undefined
      ? undefined
      : await openPostgresSessionLeases({
          database,
          logger,
          ...(config.database?.leases === undefined ? {} : { timings: config.database.leases }),
        });
  if (leases !== undefined) context.onFailure.push(() => leases.close());
  const presence =
    database === undefined || leases === undefined
      ? undefined
      : await openPostgresWorkerPresence({
          database,
          instanceId: leases.instanceId,
          liveMs: config.database?.leases?.leaseMs ?? DEFAULT_LEASE_MS,
          logger,
        });
  if (presence !== undefined) context.onFailure.push(() => presence.close());
  const registry = await loadWorkerRegistry({
    documents,
    logger,
    elsewhere: (workerId) => presence?.elsewhere(workerId),
  });
  // The bash grammar loads at the first shell_exec call the gate judges (see the gate's check).
  const engine = await createPermissionEngine({ lazyParser: true });
  const dataDirPath = await realpath(config.dataDir);
  const sessions =
    database === undefined
      ? await openFileSessionStore({ dataDir: config.dataDir, logger })
      : createPostgresSessionStore({
          database,
          logger,
          ...(leases === undefined ? {} : { fence: { instanceId: leases.instanceId } }),
        });
  const eventLog = database === undefined ? undefined : await openPostgresEventLog({ database, logger });
  // A damaged jobs file stops the start with its path and reason: it is never emptied.
  const cronStore = await openCronJobStore({ documents, logger });
  const models = createModelResolver(config.models);
  const pairing = openPairingCodeStore({ documents, credentials, now });
  const pairingLimiter = createRedemptionLimiter({ now, logger });

  const localDispatcher = createJobDispatcher({
    registry,
    logger,
    serverVersion: SERVER_VERSION,
    ...(config.dispatchMarginMs === undefined ? {} : { marginMs: config.dispatchMarginMs }),
    ...(config.workerOfflineWindowMs === undefined ? {} : { offlineWindowMs: config.workerOfflineWindowMs }),
  });
  // With a database, tool calls are rows any instance may run, where the worker is connected.
  const dispatcher =
    database === undefined || leases === undefined
      ? localDispatcher
      : await openRoutedJobDispatcher({
          local: localDispatcher,
          registry,
          database,
          instanceId: leases.instanceId,
          logger,
          ...(config.dispatchMarginMs === undefined ? {} : { marginMs: config.dispatchMarginMs }),
        });
  context.onFailure.push(async () => dispatcher.close());
  const audit =
    database === undefined
      ? openFileAuditLog({ dataDir: config.dataDir, logger })
      : openPostgresAuditLog({ database, logger });
  let gate: ApprovalGate | undefined;
  const permissions = createPermissionsStore({
    documents,
    logger,
    onProblem: (problem) => gate?.reportProblem(problem),
    onValid: (workerId) => gate?.reportValid(workerId),
  });
  const rulesWatch = createWorkerRulesWatch({ store: permissions, logger });
  const workerChanges = createWorkerChanges();
  // The other instances learn of each worker connected here, and of each change to it.
  const stopSharingPresence = workerChanges.subscribe(({ workerId }) => {
    presence?.update(workerId, registry.connectedHere(workerId)).catch((error: unknown) => {
      logger.warn({ err: error, workerId }, 'cannot share where the worker is connected');
    });
  });
  gate = createApprovalGate({
    engine,
    store: permissions,
    registry,
    dispatcher,
    audit,
    logger,
    protectedRoots: [dataDirPath],
    sessionGrants: createSessionGrants({ documents, logger }),
    now,
  });
  const approvalGate = gate;
  const grants = createGrantService({
    store: permissions,
    audit,
    logger,
    now,
    credentialLabel: (credentialId) => {
      try {
        return credentials.list().find((credential) => credential.id === credentialId)?.label;
      } catch {
        // A broken credentials file refuses every connection; a listing just goes without labels.
        return undefined;
      }
    },
    rulesChanged: (workerId) => approvalGate.rulesChanged(workerId),
  });
  // The task tool runs turns, and turns are offered the task tool: it reaches the agent runner and
  // the agents through these, set just below.
  let agents: AgentDirectory | undefined;
  let runner: AgentRunner | undefined;
  let scheduler: CronScheduler | undefined;
  const limits = toTurnLimits(config.agent);
  const builtinTools = [
    createSkillTool({
      dispatcher,
      skills: (workerId) => registry.registration(workerId)?.catalog?.skills ?? [],
      readRules: async (workerId) =>
        toReadRules({
          rules: (await permissions.load(workerId)).rules,
          home: registry.registration(workerId)?.home,
          now: now(),
        }),
    }),
    createTaskTool({
      agents: (workerId) => agents?.agents(workerId),
      run: (run) => {
        if (runner === undefined) throw new MolfError('internal', 'the server is still starting');
        return runner.runSubagent(run);
      },
      defaultMaxSteps: limits.maxSteps,
      ...(config.agent?.maxParallelTasks === undefined ? {} : { maxParallel: config.agent.maxParallelTasks }),
      ...(config.agent?.taskTimeoutMs === undefined ? {} : { timeoutMs: config.agent.taskTimeoutMs }),
    }),
    createCronTool({ scheduler: () => scheduler }),
  ];
  const catalog = createToolCatalog({
    registry,
    logger,
    serverTools: [...builtinTools, ...(config.serverTools ?? [])],
  });
  agents = createAgentDirectory({ registry, catalog, models });
  const toolCalls = createToolCallRunner({ gate, dispatcher, catalog, audit, logger });
  const events = createSessionEvents({
    logger,
    ...(eventLog === undefined ? {} : { storage: eventLog }),
    ...(leases === undefined ? {} : { runs: (sessionId: string) => leases.holds(sessionId) }),
  });
  const turnServices: TurnServices = {
    store: sessions,
    events,
    models,
    registry,
    catalog,
    toolCalls,
    instructions: createProjectInstructions(dispatcher),
    logger,
  };
  const approvalWatchers = createApprovalWatchers();
  const agent = createAgentRunner({
    services: turnServices,
    leases,
    presence,
    watchers: approvalWatchers,
    cronAskOf: (cronJobId, sessionId) => {
      const job = cronStore.get(cronJobId);
      return job === undefined ? undefined : cronUnattendedAsk(job, sessionId, approvalWatchers);
    },
    ...(config.agent === undefined ? {} : { settings: config.agent }),
    titleModel: config.models?.titleModel,
  });
  runner = agent;
  const stopForwarding = forwardApprovalsToSessions({ gate, sessions, events, logger });
  // A worker's rules file breaking or mending changes what `workers.events` shows of it.
  const stopWatchingProblems = gate.subscribe((event) => {
    if (event.type === 'permissions.invalid') {
      workerChanges.publish({ type: 'worker.changed', workerId: event.problem.workerId });
    } else if (event.type === 'permissions.valid') {
      workerChanges.publish({ type: 'worker.changed', workerId: event.workerId });
    }
  });
  // People's answers: to this gate, or, with a database, to the gate of the server whose turn asked.
  const answers =
    database === undefined || leases === undefined
      ? createLocalApprovalAnswers(gate)
      : await openSharedApprovalAnswers({
          gate,
          database,
          instanceId: leases.instanceId,
          logger,
          liveMs: config.database?.leases?.leaseMs ?? DEFAULT_LEASE_MS,
        });
  context.onFailure.push(() => answers.close());
  const approvalLinks =
    notify === undefined || linkKey === undefined
      ? undefined
      : createApprovalLinks({
          key: linkKey,
          answers,
          ttlMs: (notify.linkTtlMinutes ?? DEFAULT_LINK_TTL_MINUTES) * 60_000,
          logger,
          ...(notify.now === undefined ? {} : { now: notify.now }),
        });
  const notifier =
    notify === undefined || approvalLinks === undefined
      ? undefined
      : startApprovalNotifier({
          gate,
          links: approvalLinks,
          targets: notify.targets,
          publicUrl: notify.publicUrl,
          sessions,
          registry,
          logger,
          ...(notify.timeoutMs === undefined ? {} : { timeoutMs: notify.timeoutMs }),
        });
  const reportCatalog = createCatalogReporter({ registry, agents, logger });
  const cron = await startCronScheduler({
    store: cronStore,
    fire: createCronFire({ sessions, events, agent, registry, dispatcher, watchers: approvalWatchers }),
    logger,
    checkJob: (job) => checkCronJob(job, { registry, sessions }),
    ...(database === undefined || leases === undefined
      ? {}
      : {
          ...cronSlotClaims({ database, instanceId: leases.instanceId, deadAfterMs: 10_000 }),
        }),
    ...(config.cron?.clock === undefined ? {} : { clock: config.cron.clock }),
    ...(config.cron?.timezone === undefined ? {} : { defaultTimezone: config.cron.timezone }),
    ...(config.cron?.minIntervalMs === undefined ? {} : { minIntervalMs: config.cron.minIntervalMs }),
  });
  scheduler = cron;
  const cronNotifier =
    notify === undefined
      ? undefined
      : startCronNotifier({
          scheduler: cron,
          targets: notify.targets,
          registry,
          logger,
          ...(notify.timeoutMs === undefined ? {} : { timeoutMs: notify.timeoutMs }),
        });
  const databaseHealth = database === undefined ? undefined : watchDatabaseHealth({ database, logger });
  const router = createAppRouter({
    answers,
    sessions,
    sessionEvents: events,
    toolResultFiles: createToolResultFiles({ store: sessions, dispatcher }),
    agent,
    cron,
    gate,
    ...(database === undefined ? {} : { workerReturnMs: WORKER_RETURN_MS }),
    approvalWatchers,
    permissions,
    grants,
    registry,
    credentials,
    pairing,
    isCredentialActive: (credentialId) => credentials.isActive(credentialId),
    isCredentialFixed: (credentialId) => credentials.isFixed(credentialId),
    dispatcher,
    serverVersion: SERVER_VERSION,
    agents,
    catalog,
    onWorkerEvent: (event) => {
      logger.info({ workerId: event.workerId, name: event.name }, event.type);
      const workerId = event.workerId as WorkerId;
      if (event.type === 'worker.connected') {
        reportCatalog(workerId);
        rulesWatch.connected(workerId);
      } else {
        rulesWatch.disconnected(workerId);
      }
      workerChanges.publish({ type: event.type, workerId });
    },
    onCatalogChanged: (workerId) => reportCatalog(workerId),
    workerChanges,
    checkModel: async (input) => {
      const session = input.sessionId === undefined ? undefined : await sessions.get(input.sessionId);
      return checkModel({
        resolver: models,
        prompt: input.model,
        session: session?.model,
        defaultModel: config.models?.defaultModel,
      });
    },
    listModels: async () => {
      const recent = await sessions.list({ limit: RECENT_SESSIONS_FOR_MODELS, offset: 0 });
      return listModels({
        settings: config.models ?? {},
        recent: recent.sessions.flatMap((session) => (session.model === undefined ? [] : [session.model])),
      });
    },
  });
  const startedAt = Date.now();

  let stopping: Promise<void> | undefined;
  function stopWork(): Promise<void> {
    // The agent first: its turns end by cancelling their approvals and worker calls, which needs
    // the gate and the dispatcher still open.
    // No run starts once stopping begins; then the agent as before.
    stopping ??= closeInOrder([
      () => cron.close(),
      () => agent.close(),
      () => answers.close(),
      async () => stopSharingPresence(),
      () => presence?.close(),
      () => leases?.close(),
      () => gate?.close(),
      () => dispatcher.close(),
    ]);
    return stopping;
  }

  let closing: Promise<void> | undefined;
  function close(): Promise<void> {
    closing ??= closeInOrder([
      stopWork,
      stopForwarding,
      stopWatchingProblems,
      () => rulesWatch.close(),
      () => notifier?.close(),
      () => cronNotifier?.close(),
      () => registry.flush(),
      () => events.close(),
      () => sessions.close(),
      () => cronStore.close(),
      () => audit.close(),
      () => credentials.close(),
      () => documents.close(),
      () => databaseHealth?.close(),
      () => database?.close(),
      () => context.dataDirLock.release(),
    ]);
    return closing;
  }

  return {
    dataDir: config.dataDir,
    registry,
    dispatcher,
    leases,
    credentials,
    generatedTokens,
    pairing,
    pairingLimiter,
    gate,
    approvalWatchers,
    permissions,
    grants,
    catalog,
    agents,
    toolCalls,
    sessions,
    database,
    documents,
    events,
    agent,
    cron,
    router,
    approvalLinks,
    notifier,
    health: () => {
      const link = databaseHealth?.current();
      return {
        status: link?.reachable === false ? 'degraded' : 'ok',
        version: SERVER_VERSION,
        uptimeSeconds: Math.round((Date.now() - startedAt) / 1000),
        workers: toWorkerHealth(registry.list()),
        ...(link === undefined ? {} : { database: link }),
      };
    },
    stopWork,
    close,
    [Symbol.asyncDispose]: close,
  };
}

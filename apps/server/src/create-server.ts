import { randomUUID } from 'node:crypto';
import { realpath } from 'node:fs/promises';
import { createServer as createHttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createSilentLogger, type Logger } from '@molf/logging';
import { createPermissionEngine } from '@molf/permissions';
import { ConnectionParamsSchema, isMolfError, MolfError, type Role } from '@molf/protocol';
import { TRPCError } from '@trpc/server';
import { applyWSSHandler } from '@trpc/server/adapters/ws';
import { WebSocketServer } from 'ws';
import {
  type ApprovalGate,
  createApprovalGate,
  createPermissionsStore,
  createToolCallRunner,
  openAuditLog,
  type PermissionsStore,
  type ToolCallRunner,
} from './approvals/index.ts';
import { createConnectionGuard, isWebSocketProtocolError } from './auth/connection-guard.ts';
import { type CredentialStore, openCredentialStore } from './auth/credential-store.ts';
import { createOriginPolicy, type OriginDecision, parseOrigins } from './auth/origin-policy.ts';
import { roleFromPrefix } from './auth/tokens.ts';
import { ensureDataDir } from './data-dir.ts';
import { createHttpHandler, toWorkerHealth } from './http/handle-http.ts';
import { createModelResolver, type ProviderSettings } from './providers/resolve-model.ts';
import { type AppRouter, createAppRouter } from './rpc/router.ts';
import type { RpcContext } from './rpc/trpc.ts';
import {
  type AgentRunner,
  type AgentSettings,
  createAgentRunner,
  createSessionEvents,
  openSessionStore,
  type SessionStore,
} from './sessions/index.ts';
import { SERVER_VERSION } from './version.ts';
import { createJobDispatcher, type JobDispatcher } from './workers/job-dispatcher.ts';
import { loadWorkerRegistry, type WorkerRegistry } from './workers/worker-registry.ts';

export const DEFAULT_HOST = '127.0.0.1';
export const DEFAULT_PORT = 7600;
/**
 * Largest WebSocket message accepted, 128 MiB: a tool result may carry attachments up to
 * 100 MB once base64-encoded framing is counted, and 1 MiB results must never come near it.
 */
export const DEFAULT_MAX_PAYLOAD_BYTES = 128 * 1024 * 1024;

export type ServerConfig = {
  /** Default `127.0.0.1`. */
  host?: string;
  /** Default 7600; 0 picks a free port (read it from the handle). */
  port?: number;
  /** Where credentials and worker state live; created 0700 if missing. */
  dataDir: string;
  /** Fixed tokens, kept only in memory, accepted beside the stored ones. */
  tokens?: Partial<Record<Role, string>>;
  /** Generate and store a token for each role that has neither a fixed nor a stored one. Default false. */
  generateMissingTokens?: boolean;
  /** Default: silent. */
  logger?: Logger;
  /** Ping every `pingMs` (default 30 s); a socket without a pong after `pongWaitMs` (default 10 s) is closed. */
  keepAlive?: { pingMs?: number; pongWaitMs?: number };
  /** Extra time beyond a call's own timeout before the server cancels it. Default 5 s. */
  dispatchMarginMs?: number;
  /** Default 128 MiB. */
  maxPayloadBytes?: number;
  /** Model providers: default model, keys, custom OpenAI-compatible endpoints, Ollama host. */
  models?: ProviderSettings;
  /** Agent loop limits (steps, queue, turn timeout). */
  agent?: AgentSettings;
  /** A socket that has not authenticated within this time is closed. Default 10 s. */
  authTimeoutMs?: number;
  /**
   * Sockets still waiting to authenticate, per remote address and in all; more are closed at once
   * (code 1013), so nobody can hold the server's memory with unauthenticated sockets.
   * Default 16 per address, 256 in all.
   */
  maxUnauthenticated?: { perAddress?: number; total?: number };
  /**
   * How often the credentials file is checked for revocations; open connections whose credential
   * was revoked are closed. Default 2 s.
   */
  credentialsPollMs?: number;
  /**
   * Web pages that may open a WebSocket, `http(s)://host[:port]`, besides the server's own origin
   * (its listen address and port; on loopback also 127.0.0.1, localhost and [::1]). A connection
   * without an `Origin` header (CLI, worker) is not affected. Default none.
   */
  allowedOrigins?: readonly string[];
  /** Largest message from a socket that has not authenticated yet. Default 64 KiB. */
  preAuthMaxPayloadBytes?: number;
};

export type MolfServer = AsyncDisposable & {
  host: string;
  port: number;
  /** `ws://host:port` — what workers and clients connect to. */
  url: string;
  /** `http://host:port` — `/healthz` and, later, the web client. */
  httpUrl: string;
  dataDir: string;
  registry: WorkerRegistry;
  dispatcher: JobDispatcher;
  credentials: CredentialStore;
  /** The approval gate: pending approvals, answers, explain. */
  gate: ApprovalGate;
  /** Each worker's `permissions.jsonc`. */
  permissions: PermissionsStore;
  /** Runs a tool call the way the agent loop does: through the gate, then to the worker. */
  toolCalls: ToolCallRunner;
  /** Stored sessions and their messages. */
  sessions: SessionStore;
  /** The agent loop: prompts, aborts. */
  agent: AgentRunner;
  /** Tokens generated by this start (shown once, stored only as hashes). */
  generatedTokens: Partial<Record<Role, string>>;
  close(): Promise<void>;
};

const MIN_FIXED_TOKEN_LENGTH = 16;

function validateFixedTokens(tokens: Partial<Record<Role, string>>): void {
  for (const [role, token] of Object.entries(tokens)) {
    if (token !== undefined && token.length < MIN_FIXED_TOKEN_LENGTH) {
      throw new MolfError(
        'config_invalid',
        `the fixed ${role} token is too short: use at least ${MIN_FIXED_TOKEN_LENGTH} characters`,
      );
    }
  }
  if (tokens.client !== undefined && tokens.client === tokens.worker) {
    throw new MolfError(
      'config_invalid',
      'the client and worker tokens must differ: each role needs its own credential',
    );
  }
}

export async function createServer(config: ServerConfig): Promise<MolfServer> {
  const logger = config.logger ?? createSilentLogger();
  const host = config.host ?? DEFAULT_HOST;
  const fixedTokens = config.tokens ?? {};
  validateFixedTokens(fixedTokens);
  parseOrigins(config.allowedOrigins ?? []);
  await ensureDataDir(config.dataDir);

  const credentials = openCredentialStore({ dataDir: config.dataDir, fixed: fixedTokens });
  const generatedTokens: Partial<Record<Role, string>> = {};
  if (config.generateMissingTokens === true) {
    for (const role of ['client', 'worker'] as const) {
      if (fixedTokens[role] === undefined && !credentials.hasStored(role)) {
        const { token } = await credentials.create({ role, label: `generated at first start` });
        generatedTokens[role] = token;
      }
    }
  }

  const registry = await loadWorkerRegistry({ dataDir: config.dataDir, logger });
  const dispatcher = createJobDispatcher({
    registry,
    logger,
    serverVersion: SERVER_VERSION,
    ...(config.dispatchMarginMs === undefined ? {} : { marginMs: config.dispatchMarginMs }),
  });
  const audit = openAuditLog({ dataDir: config.dataDir, logger });
  let gate: ApprovalGate | undefined;
  const permissions = createPermissionsStore({
    dataDir: config.dataDir,
    logger,
    onProblem: (problem) => gate?.reportProblem(problem),
    onValid: (workerId) => gate?.reportValid(workerId),
  });
  gate = createApprovalGate({
    // The bash grammar loads at the first shell_exec call the gate judges (see resolvePaths).
    engine: await createPermissionEngine({ lazyParser: true }),
    store: permissions,
    registry,
    dispatcher,
    audit,
    logger,
    protectedRoots: [await realpath(config.dataDir)],
  });
  const toolCalls = createToolCallRunner({ gate, dispatcher, audit, logger });
  const sessions = await openSessionStore({ dataDir: config.dataDir, logger });
  const sessionEvents = createSessionEvents();
  const agent = createAgentRunner({
    store: sessions,
    events: sessionEvents,
    models: createModelResolver(config.models),
    toolCalls,
    dispatcher,
    registry,
    logger,
    ...(config.agent === undefined ? {} : { settings: config.agent }),
  });
  // Approvals of a session are part of its event stream too.
  gate.subscribe((event) => {
    if (event.type === 'approval.requested' && sessions.get(event.approval.sessionId) !== undefined) {
      sessionEvents.publish(event.approval.sessionId, { type: 'approval.requested', approval: event.approval });
    } else if (event.type === 'approval.resolved' && sessions.get(event.sessionId) !== undefined) {
      const { type: _type, sessionId, ...rest } = event;
      sessionEvents.publish(sessionId, { type: 'approval.resolved', ...rest });
    }
  });
  const startedAt = Date.now();
  const router = createAppRouter({
    sessions,
    sessionEvents,
    agent,
    gate,
    permissions,
    registry,
    isCredentialActive: (credentialId) => credentials.isActive(credentialId),
    isCredentialFixed: (credentialId) => credentials.isFixed(credentialId),
    dispatcher,
    serverVersion: SERVER_VERSION,
    onWorkerEvent: (event) => logger.info({ workerId: event.workerId, name: event.name }, event.type),
  });

  const httpServer = createHttpServer(
    createHttpHandler({
      health: () => {
        const workers = registry.list();
        return {
          status: 'ok',
          version: SERVER_VERSION,
          uptimeSeconds: Math.round((Date.now() - startedAt) / 1000),
          workers: toWorkerHealth(workers),
        };
      },
    }),
  );
  const maxPayloadBytes = config.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD_BYTES;
  /** Set once the port is known; nothing can connect before. */
  let originPolicy: ((origin: string | undefined) => OriginDecision) | undefined;
  const wss = new WebSocketServer({
    server: httpServer,
    maxPayload: maxPayloadBytes,
    // A web page's origin is checked before the upgrade, so a foreign page never gets a socket
    // (a page on loopback could otherwise reach a loopback server; tokens still guard the rest).
    verifyClient: (info, callback) => {
      // ws reads `Origin` (or `Sec-WebSocket-Origin` of protocol version 8); absent means undefined.
      const origin = info.origin as string | undefined;
      if (originPolicy?.(origin).type === 'allow') {
        callback(true);
        return;
      }
      logger.warn({ origin, remoteAddress: info.req.socket.remoteAddress }, 'websocket refused: origin not allowed');
      callback(false, 403, 'Forbidden');
    },
  });
  // The WebSocket server re-emits every HTTP server error; without a listener a failed listen
  // (port in use) would crash the process instead of reaching the start-up handler below.
  let listening = false;
  wss.on('error', (error) => {
    if (listening) logger.error({ err: error }, 'websocket server error');
  });
  const guard = createConnectionGuard({
    credentials,
    logger,
    ...(config.authTimeoutMs === undefined ? {} : { authTimeoutMs: config.authTimeoutMs }),
    ...(config.maxUnauthenticated === undefined ? {} : { maxUnauthenticated: config.maxUnauthenticated }),
    ...(config.credentialsPollMs === undefined ? {} : { credentialsPollMs: config.credentialsPollMs }),
    maxPayloadBytes,
    ...(config.preAuthMaxPayloadBytes === undefined ? {} : { preAuthMaxPayloadBytes: config.preAuthMaxPayloadBytes }),
  });
  wss.on('connection', (socket, request) => guard.admit(socket, request));

  const handler = applyWSSHandler<AppRouter>({
    wss,
    router,
    keepAlive: {
      enabled: true,
      pingMs: config.keepAlive?.pingMs ?? 30_000,
      pongWaitMs: config.keepAlive?.pongWaitMs ?? 10_000,
    },
    createContext({ req, res, info }): RpcContext {
      const remoteAddress = req.socket.remoteAddress;
      const params = ConnectionParamsSchema.safeParse(info.connectionParams ?? {});
      if (!params.success) {
        logger.warn({ remoteAddress }, 'connection refused: no token');
        throw new TRPCError({
          code: 'UNAUTHORIZED',
          message: 'no token: connect with a client or worker token in the connection params',
        });
      }
      let verified: ReturnType<CredentialStore['verify']>;
      try {
        verified = credentials.verify(params.data.token);
      } catch (error) {
        logger.error({ err: error }, 'connection refused: the credentials file cannot be read');
        throw new TRPCError({
          code: 'INTERNAL_SERVER_ERROR',
          message: isMolfError(error) ? error.message : 'the server cannot read its credentials',
        });
      }
      if (verified === undefined) {
        const claimed = roleFromPrefix(params.data.token);
        logger.warn({ remoteAddress, claimedRole: claimed }, 'connection refused: unknown token');
        throw new TRPCError({
          code: 'UNAUTHORIZED',
          message: `invalid token: this server does not know that ${claimed ?? ''}${claimed === undefined ? '' : ' '}token`,
        });
      }
      if (!guard.authenticated(res, verified.credentialId)) {
        throw new TRPCError({ code: 'UNAUTHORIZED', message: 'this connection was refused before it authenticated' });
      }
      const connectionId = randomUUID();
      logger.debug({ remoteAddress, role: verified.role, connectionId }, 'connection authenticated');
      return { ...verified, connectionId, remoteAddress, request: req };
    },
    onError({ error, path, type }) {
      if (isWebSocketProtocolError(error.cause)) {
        // A peer's bad frame (too large, malformed): ws closed the socket and the guard logged it.
        logger.debug({ code: error.cause.code, message: error.message }, 'websocket protocol error');
      } else if (error.code === 'INTERNAL_SERVER_ERROR') {
        logger.error({ err: error, path, type }, 'rpc call failed');
      } else {
        logger.debug({ code: error.code, path, type, message: error.message }, 'rpc call rejected');
      }
    },
  });

  await new Promise<void>((resolvePromise, reject) => {
    const onError = (error: NodeJS.ErrnoException) => {
      httpServer.off('listening', onListening);
      if (error.code === 'EADDRINUSE') {
        reject(
          new MolfError(
            'address_in_use',
            `port ${config.port ?? DEFAULT_PORT} on ${host} is already in use: stop the other process or pick another port (--port 0 picks a free one)`,
            { cause: error },
          ),
        );
      } else {
        reject(error);
      }
    };
    const onListening = () => {
      httpServer.off('error', onError);
      resolvePromise();
    };
    httpServer.once('error', onError);
    httpServer.once('listening', onListening);
    httpServer.listen(config.port ?? DEFAULT_PORT, host);
  }).catch(async (error: unknown) => {
    guard.close();
    await new Promise<void>((resolvePromise) => wss.close(() => resolvePromise()));
    throw error;
  });
  listening = true;

  const { port } = httpServer.address() as AddressInfo;
  originPolicy = createOriginPolicy({
    host,
    port,
    ...(config.allowedOrigins === undefined ? {} : { allowedOrigins: config.allowedOrigins }),
  });
  const urlHost = host.includes(':') ? `[${host}]` : host;
  let closing: Promise<void> | undefined;

  async function close(): Promise<void> {
    closing ??= (async () => {
      guard.close();
      try {
        await agent.close();
        gate?.close();
        dispatcher.close();
        handler.broadcastReconnectNotification();
        for (const client of wss.clients) client.terminate();
        await new Promise<void>((resolvePromise) => wss.close(() => resolvePromise()));
      } finally {
        httpServer.closeAllConnections();
        await new Promise<void>((resolvePromise) => httpServer.close(() => resolvePromise()));
        await registry.flush();
        sessionEvents.close();
        await sessions.close();
        await audit.close();
        logger.info('server stopped');
      }
    })();
    return closing;
  }

  logger.info({ url: `ws://${urlHost}:${port}`, dataDir: config.dataDir }, 'server listening');

  return {
    host,
    port,
    url: `ws://${urlHost}:${port}`,
    httpUrl: `http://${urlHost}:${port}`,
    dataDir: config.dataDir,
    registry,
    dispatcher,
    credentials,
    gate,
    permissions,
    toolCalls,
    sessions,
    agent,
    generatedTokens,
    close,
    [Symbol.asyncDispose]: close,
  };
}

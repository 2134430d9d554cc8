import { createSilentLogger } from '@molf/logging';
import { closeInOrder } from './close-in-order.ts';
import { createServerServices, type ServerServices, type ServerServicesConfig } from './services/index.ts';
import {
  createApprovalLinkRoute,
  createPairRoute,
  parseOrigins,
  serveWebSocket,
  type WebSocketTransport,
  type WebSocketTransportConfig,
} from './transport/index.ts';

export { DEFAULT_HOST, DEFAULT_MAX_PAYLOAD_BYTES, DEFAULT_PORT } from './transport/index.ts';

export type ServerConfig = ServerServicesConfig & WebSocketTransportConfig;

export type MolfServer = AsyncDisposable &
  Pick<
    ServerServices,
    | 'dataDir'
    | 'registry'
    | 'dispatcher'
    | 'leases'
    | 'credentials'
    | 'gate'
    | 'approvalWatchers'
    | 'permissions'
    | 'grants'
    | 'toolCalls'
    | 'catalog'
    | 'agents'
    | 'sessions'
    | 'agent'
    | 'cron'
    | 'generatedTokens'
    | 'pairing'
  > &
  Pick<WebSocketTransport, 'host' | 'port' | 'url' | 'httpUrl'> & {
    /** Ends the work in flight, closes every socket, then the stores. Idempotent. */
    close(): Promise<void>;
  };

/**
 * A Molf server: its services (`createServerServices`, no sockets) served over WebSocket on one
 * port (`serveWebSocket`). TLS, pairing or a second listener change only the transport.
 */
export async function createServer(config: ServerConfig): Promise<MolfServer> {
  const logger = config.logger ?? createSilentLogger();
  // A mistyped origin fails before the data directory is made.
  parseOrigins(config.allowedOrigins ?? []);
  const services = await createServerServices({ ...config, logger });
  let transport: WebSocketTransport;
  try {
    transport = await serveWebSocket({
      ...config,
      router: services.router,
      credentials: services.credentials,
      health: services.health,
      routes: [
        createPairRoute({ pairing: services.pairing, limiter: services.pairingLimiter, logger }),
        ...(services.approvalLinks === undefined ? [] : [createApprovalLinkRoute({ links: services.approvalLinks })]),
      ],
      logger,
    });
  } catch (error) {
    await services.close().catch((closeError: unknown) => {
      logger.error({ err: closeError }, 'closing the services after a failed start failed');
    });
    throw error;
  }

  if (services.notifier !== undefined && config.notify?.publicUrl === undefined) {
    services.notifier.useDefaultBaseUrl(transport.httpUrl);
    logger.warn(
      { linkBase: transport.httpUrl },
      "approval links point to the server's own address: set notify.publicUrl if they are opened on another machine",
    );
  }

  let closing: Promise<void> | undefined;
  function close(): Promise<void> {
    closing ??= (async () => {
      try {
        // Work ends while clients are still connected, so they hear how their turns and calls ended.
        await closeInOrder([() => services.stopWork(), () => transport.close(), () => services.close()]);
      } finally {
        logger.info('server stopped');
      }
    })();
    return closing;
  }

  logger.info({ url: transport.url, dataDir: config.dataDir }, 'server listening');

  return {
    host: transport.host,
    port: transport.port,
    url: transport.url,
    httpUrl: transport.httpUrl,
    dataDir: services.dataDir,
    registry: services.registry,
    dispatcher: services.dispatcher,
    leases: services.leases,
    credentials: services.credentials,
    gate: services.gate,
    approvalWatchers: services.approvalWatchers,
    permissions: services.permissions,
    grants: services.grants,
    toolCalls: services.toolCalls,
    catalog: services.catalog,
    agents: services.agents,
    sessions: services.sessions,
    agent: services.agent,
    cron: services.cron,
    generatedTokens: services.generatedTokens,
    pairing: services.pairing,
    close,
    [Symbol.asyncDispose]: close,
  };
}

import { randomUUID } from 'node:crypto';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Logger } from '@molf/logging';
import { isMolfError, MolfError } from '@molf/protocol';
import { applyWSSHandler } from '@trpc/server/adapters/ws';
import { WebSocketServer } from 'ws';
import type { CredentialStore } from '../auth/credential-store.ts';
import { closeInOrder } from '../close-in-order.ts';
import type { AppRouter } from '../rpc/router.ts';
import { type RpcContext, toTRPCError } from '../rpc/trpc.ts';
import type { HealthReport } from '../services/health-report.ts';
import { answerPlainHttpOnTls } from './answer-plain-http-on-tls.ts';
import { authenticateConnection } from './authenticate-connection.ts';
import { createConnectionGuard, isWebSocketProtocolError } from './connection-guard.ts';
import { createHealthRoute, createHttpHandler, createReadinessRoute, type HttpRoute } from './handle-http.ts';
import { createOriginPolicy, type OriginDecision, parseOrigins } from './origin-policy.ts';
import { createWebClientRoute } from './serve-web-client.ts';

export const DEFAULT_HOST = '127.0.0.1';
export const DEFAULT_PORT = 7600;
/**
 * Largest WebSocket message accepted, 128 MiB: a tool result may carry attachments up to
 * 100 MB once base64-encoded framing is counted, and 1 MiB results must never come near it.
 */
export const DEFAULT_MAX_PAYLOAD_BYTES = 128 * 1024 * 1024;
/** How long a TLS handshake may take: a real client's takes milliseconds, even across the world. */
export const DEFAULT_TLS_HANDSHAKE_TIMEOUT_MS = 10_000;

/** How the server listens and whom it lets in; the part of the server's configuration the transport reads. */
export type WebSocketTransportConfig = {
  /** Default `127.0.0.1`. */
  host?: string;
  /** Default 7600; 0 picks a free port (read it from the handle). */
  port?: number;
  /** Ping every `pingMs` (default 30 s); a socket without a pong after `pongWaitMs` (default 10 s) is closed. */
  keepAlive?: { pingMs?: number; pongWaitMs?: number };
  /** Default 128 MiB. */
  maxPayloadBytes?: number;
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
   * How often the credentials of live connections are noted as in use, for "last used" (a worker
   * connected for weeks stays "last used" now). Default 60 s.
   */
  lastUsedRefreshMs?: number;
  /**
   * Web pages that may open a WebSocket, `http(s)://host[:port]`, besides the server's own origin
   * (its listen address and port; on loopback also 127.0.0.1, localhost and [::1]). A connection
   * without an `Origin` header (CLI, worker) is not affected. Default none.
   */
  allowedOrigins?: readonly string[];
  /** Largest message from a socket that has not authenticated yet. Default 64 KiB. */
  preAuthMaxPayloadBytes?: number;
  /**
   * The built web client (a directory with `index.html`), served on this port. Default none: the
   * port serves `/healthz` and the WebSocket only.
   */
  webRoot?: string;
  /**
   * Serve TLS (1.3 at least) with this certificate and key, both PEM: `wss://` and `https://`, and
   * a plain `http://` or `ws://` request gets a 400 saying so. Default none: plain `ws://` and `http://`.
   */
  tls?: { cert: string; key: string };
  /**
   * With TLS: a connection whose handshake has not finished within this time is closed, as a socket
   * that does not authenticate in time is (Node's own limit, 120 s, would let anyone hold sockets
   * open for two minutes each with a few bytes of a ClientHello). Default 10 s.
   */
  tlsHandshakeTimeoutMs?: number;
};

export type ServeWebSocketOptions = WebSocketTransportConfig & {
  /** What every authenticated connection may call. */
  router: AppRouter;
  /** Checks each connection's token, and is watched for revocations. */
  credentials: CredentialStore;
  /** What `GET /healthz` answers. */
  health: () => HealthReport;
  /** More plain HTTP beside `/healthz` (approval links, a web client's files). Default none. */
  routes?: readonly HttpRoute[];
  logger: Logger;
};

/** One port serving HTTP (`/healthz` and the given routes) and the tRPC WebSocket endpoint. */
export type WebSocketTransport = AsyncDisposable & {
  host: string;
  port: number;
  /** `ws://host:port` (`wss://` with TLS) — what workers and clients connect to. */
  url: string;
  /** `http://host:port` (`https://` with TLS) — `/healthz` and the web client. */
  httpUrl: string;
  /** Tells clients to reconnect, cuts every socket and stops listening. Idempotent. */
  close(): Promise<void>;
};

/**
 * Serves a router over WebSocket: the origin check before the upgrade, the connection guard
 * (pre-auth limits, timeouts, revocations), the token check, keep-alive; then listens. Fails with
 * `address_in_use` when the port is taken, having closed what it opened.
 */
export async function serveWebSocket(options: ServeWebSocketOptions): Promise<WebSocketTransport> {
  const { logger, credentials } = options;
  const host = options.host ?? DEFAULT_HOST;
  parseOrigins(options.allowedOrigins ?? []);

  const web = options.webRoot === undefined ? undefined : createWebClientRoute(options.webRoot);
  if (options.webRoot !== undefined && web === undefined) {
    logger.warn(
      { webRoot: options.webRoot },
      'the web client is not built (no index.html there): run `pnpm install` or `pnpm build`; the port serves no page meanwhile',
    );
  }
  const handleHttp = createHttpHandler({
    // The page answers every path the other routes do not (its own paths such as /s/<session>): last.
    routes: [
      createHealthRoute(options.health),
      createReadinessRoute(options.health),
      ...(options.routes ?? []),
      ...(web === undefined ? [] : [web]),
    ],
    logger,
  });
  const tls = options.tls;
  let httpServer: HttpServer;
  /** With TLS: destroys the connections accepted, also those still in their handshake. */
  let destroyAccepted: (() => void) | undefined;
  if (tls === undefined) {
    httpServer = createHttpServer(handleHttp);
  } else {
    const httpsServer = createHttpsServer(
      {
        cert: tls.cert,
        key: tls.key,
        minVersion: 'TLSv1.3',
        handshakeTimeout: options.tlsHandshakeTimeoutMs ?? DEFAULT_TLS_HANDSHAKE_TIMEOUT_MS,
      },
      handleHttp,
    );
    destroyAccepted = answerPlainHttpOnTls(httpsServer);
    httpsServer.on('tlsClientError', (error: NodeJS.ErrnoException, socket) => {
      // Old TLS versions, clients that do not trust the certificate, scanners: theirs to report.
      logger.debug({ code: error.code, remoteAddress: socket.remoteAddress }, 'tls handshake failed');
    });
    httpServer = httpsServer;
  }
  const maxPayloadBytes = options.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD_BYTES;
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
    ...(options.authTimeoutMs === undefined ? {} : { authTimeoutMs: options.authTimeoutMs }),
    ...(options.maxUnauthenticated === undefined ? {} : { maxUnauthenticated: options.maxUnauthenticated }),
    ...(options.credentialsPollMs === undefined ? {} : { credentialsPollMs: options.credentialsPollMs }),
    ...(options.lastUsedRefreshMs === undefined ? {} : { inUseMarkMs: options.lastUsedRefreshMs }),
    maxPayloadBytes,
    ...(options.preAuthMaxPayloadBytes === undefined ? {} : { preAuthMaxPayloadBytes: options.preAuthMaxPayloadBytes }),
  });
  wss.on('connection', (socket, request) => guard.admit(socket, request));

  const handler = applyWSSHandler<AppRouter>({
    wss,
    router: options.router,
    keepAlive: {
      enabled: true,
      pingMs: options.keepAlive?.pingMs ?? 30_000,
      pongWaitMs: options.keepAlive?.pongWaitMs ?? 10_000,
    },
    // tRPC calls this synchronously from the connection-params message; a known token is admitted
    // before its first wait (see authenticateConnection).
    async createContext({ req, res, info }): Promise<RpcContext> {
      const remoteAddress = req.socket.remoteAddress;
      let verified: Awaited<ReturnType<typeof authenticateConnection>>;
      try {
        verified = await authenticateConnection({
          credentials,
          logger,
          connectionParams: info.connectionParams,
          remoteAddress,
          admit: (credentialId) => guard.authenticated(res, credentialId),
        });
      } catch (error) {
        // A failed createContext never passes the procedures' middleware (tRPC answers it straight
        // through the error formatter), so its application error gets its RPC code here.
        throw isMolfError(error) ? toTRPCError(error) : error;
      }
      const connectionId = randomUUID();
      logger.debug(
        { remoteAddress, role: verified.role, connectionId, client: verified.client },
        'connection authenticated',
      );
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

  const requestedPort = options.port ?? DEFAULT_PORT;
  await new Promise<void>((resolvePromise, reject) => {
    const onError = (error: NodeJS.ErrnoException) => {
      httpServer.off('listening', onListening);
      if (error.code === 'EADDRINUSE') {
        reject(
          new MolfError(
            'address_in_use',
            `port ${requestedPort} on ${host} is already in use: stop the other process or pick another port (--port 0 picks a free one)`,
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
    httpServer.listen(requestedPort, host);
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
    ...(options.allowedOrigins === undefined ? {} : { allowedOrigins: options.allowedOrigins }),
  });
  const urlHost = host.includes(':') ? `[${host}]` : host;

  let closing: Promise<void> | undefined;
  function close(): Promise<void> {
    closing ??= closeInOrder([
      () => guard.close(),
      () => handler.broadcastReconnectNotification(),
      () => {
        for (const client of wss.clients) client.terminate();
      },
      () => new Promise<void>((resolvePromise) => wss.close(() => resolvePromise())),
      () => httpServer.closeAllConnections(),
      () => destroyAccepted?.(),
      () => new Promise<void>((resolvePromise) => httpServer.close(() => resolvePromise())),
    ]);
    return closing;
  }

  return {
    host,
    port,
    url: `${tls === undefined ? 'ws' : 'wss'}://${urlHost}:${port}`,
    httpUrl: `${tls === undefined ? 'http' : 'https'}://${urlHost}:${port}`,
    close,
    [Symbol.asyncDispose]: close,
  };
}

export { createApprovalLinkRoute } from './approval-link-route.ts';
export { type AuthenticateConnectionOptions, authenticateConnection } from './authenticate-connection.ts';
export { createHealthRoute, createHttpHandler, type HttpRoute } from './handle-http.ts';
export { parseOrigins, safeParseOrigin } from './origin-policy.ts';
export { createPairRoute, PAIR_PATH } from './pair-route.ts';
export {
  DEFAULT_HOST,
  DEFAULT_MAX_PAYLOAD_BYTES,
  DEFAULT_PORT,
  type ServeWebSocketOptions,
  serveWebSocket,
  type WebSocketTransport,
  type WebSocketTransportConfig,
} from './serve-websocket.ts';

export { type BackoffOptions, createBackoff } from './backoff.ts';
export {
  type ConnectionStatus,
  createMolfClient,
  isRefusalFrame,
  type MolfClient,
  type MolfClientOptions,
  type WebSocketClassFactory,
} from './create-molf-client.ts';
export { type FollowSessionOptions, followSession, type SessionFollower } from './follow-session.ts';
export { applySessionEvent, createSessionState, isApprovalOfSession, type SessionState } from './session-state.ts';
export type { ConnectionChange } from './track-connection.ts';

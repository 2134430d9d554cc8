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
export {
  applyTranscriptEvent,
  createTranscript,
  type SessionTranscript,
  type TranscriptItem,
  type TranscriptToolCall,
  transcriptFromMessages,
  withStoredMessages,
} from './session-transcript.ts';
export type { ConnectionChange } from './track-connection.ts';

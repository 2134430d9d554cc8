export { openFileSessionStore } from './file-session-store.ts';
export { EVENTS_CHANNEL, openPostgresEventLog } from './postgres-event-log.ts';
export { createPostgresSessionStore } from './postgres-session-store.ts';
export { createSessionEvents, MAX_KEPT_EVENTS, type SessionEvents } from './session-events.ts';
export type { QueuedPrompt, SessionStore } from './session-store.ts';
export type { StoredEventLog } from './stored-event-log.ts';
export { createToolResultFiles, type ToolResultFiles } from './tool-result-files.ts';

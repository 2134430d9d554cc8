export { createSessionEvents, MAX_KEPT_EVENTS, type SessionEvents } from './session-events.ts';
export { openSessionStore, type SessionStore } from './session-store.ts';

import type { TurnServices } from './turn-services.ts';

/** Records that a session is busy or idle and tells its followers; a failed write is logged, not thrown. */
export function setSessionStatus(
  services: Pick<TurnServices, 'store' | 'events' | 'logger'>,
  sessionId: string,
  status: 'busy' | 'idle',
): void {
  services.store.setStatus(sessionId, status).catch((error: unknown) => {
    services.logger.warn({ err: error, sessionId, status }, 'cannot record the session status');
  });
  services.events.publish(sessionId, { type: 'status', status });
}

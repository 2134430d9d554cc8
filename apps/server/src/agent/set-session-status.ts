import type { TurnServices } from './turn-services.ts';

/**
 * Records that a session is busy or idle and tells its followers at once. The promise settles when the
 * status is stored, true, or could not be, false (logged, never thrown), for the callers whose next step
 * must come after it — on several servers, a session's lease is let go only once its idle status is
 * stored, or another server would take a finished turn for a cut-off one.
 */
export function setSessionStatus(
  services: Pick<TurnServices, 'store' | 'events' | 'logger'>,
  sessionId: string,
  status: 'busy' | 'idle',
): Promise<boolean> {
  const stored = services.store.setStatus(sessionId, status).then(
    () => true,
    (error: unknown) => {
      services.logger.warn({ err: error, sessionId, status }, 'cannot record the session status');
      return false;
    },
  );
  services.events.publish(sessionId, { type: 'status', status });
  return stored;
}

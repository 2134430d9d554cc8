import { type CronJob, MolfError } from '@molf/protocol';
import type { SessionStore } from '../sessions/index.ts';
import type { WorkerRegistry } from '../workers/worker-registry.ts';

/**
 * Refuses a job (before it is stored) whose worker the server never saw, or whose runs would go to
 * a session that does not exist, belongs to another worker or is a subagent's.
 */
export async function checkCronJob(
  job: CronJob,
  services: { registry: WorkerRegistry; sessions: SessionStore },
): Promise<void> {
  if ((await services.registry.find(job.workerId)) === undefined) {
    throw new MolfError('invalid_input', `no worker with id ${job.workerId} has ever registered with this server`, {
      field: 'workerId',
    });
  }
  if (job.target.type !== 'session') return;
  const { sessionId } = job.target;
  const session = await services.sessions.get(sessionId);
  if (session === undefined) {
    throw new MolfError('invalid_input', `no session ${sessionId}: give an existing session's id, or "new"`, {
      field: 'session',
    });
  }
  if (session.workerId !== job.workerId) {
    throw new MolfError('invalid_input', `session ${sessionId} belongs to another worker than the job's`, {
      field: 'session',
    });
  }
  if (session.parent !== undefined) {
    throw new MolfError('invalid_input', `session ${sessionId} is a subagent's session: it takes no prompts`, {
      field: 'session',
    });
  }
}

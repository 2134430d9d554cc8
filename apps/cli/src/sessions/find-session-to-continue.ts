import { realpath } from 'node:fs/promises';
import { sep } from 'node:path';
import type { MolfClient } from '@molf/client/node';
import { MolfError, type SessionInfo, type WorkerInfo } from '@molf/protocol';

/**
 * The worker that serves `directory` (a real path): the one whose workdir is the directory or its
 * nearest ancestor; of two on the same workdir, the online one.
 */
export function workerForDirectory(workers: readonly WorkerInfo[], directory: string): WorkerInfo | undefined {
  const serving = workers.filter(
    (worker) =>
      directory === worker.workdir ||
      directory.startsWith(worker.workdir.endsWith(sep) ? worker.workdir : `${worker.workdir}${sep}`),
  );
  return serving.sort(
    (left, right) =>
      right.workdir.length - left.workdir.length || Number(right.state === 'online') - Number(left.state === 'online'),
  )[0];
}

/**
 * The session `--continue` resumes: the newest (last active) top-level session of the worker that
 * serves `directory` — `workerId` when the caller knows it (its own worker, `--worker`), else the
 * worker whose workdir holds the directory, else the only one online. Throws `session_not_found`
 * when that worker has no session, `worker_not_found` when no worker can be told.
 */
export async function findSessionToContinue(options: {
  client: MolfClient;
  workerId: string | undefined;
  directory: string;
}): Promise<SessionInfo> {
  const { client } = options;
  let workerId = options.workerId;
  if (workerId === undefined) {
    const workers = await client.rpc.workers.list.query();
    const directory = await realpath(options.directory).catch(() => options.directory);
    const online = workers.filter((worker) => worker.state === 'online');
    workerId =
      workerForDirectory(workers, directory)?.workerId ?? (online.length === 1 ? online[0]?.workerId : undefined);
    if (workerId === undefined) {
      throw new MolfError(
        'worker_not_found',
        `no worker serves ${directory} and ${online.length} workers are online: pick one with --worker <id>`,
      );
    }
  }
  const { sessions } = await client.rpc.sessions.list.query({ workerId, topLevel: true, limit: 1, offset: 0 });
  const [latest] = sessions;
  if (latest === undefined) {
    throw new MolfError(
      'session_not_found',
      `worker ${workerId} has no session to continue: run without --continue to start one`,
    );
  }
  return latest;
}

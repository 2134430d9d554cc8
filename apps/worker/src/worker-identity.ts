import { randomUUID } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '@molf/logging';
import { type WorkerId, WorkerIdSchema } from '@molf/protocol';
import writeFileAtomic from 'write-file-atomic';
import { z } from 'zod';

const WorkerFileSchema = z.object({ workerId: WorkerIdSchema, createdAt: z.string() });

/**
 * The worker's persistent id, kept in `{workdir}/.molf/worker.json` so the server recognises
 * the same project across restarts. A missing or corrupt file gets a fresh id.
 */
export async function loadWorkerIdentity(options: { workdir: string; logger: Logger }): Promise<WorkerId> {
  const dir = join(options.workdir, '.molf');
  const file = join(dir, 'worker.json');
  try {
    return WorkerFileSchema.parse(JSON.parse(await readFile(file, 'utf8'))).workerId;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
      options.logger.warn({ err: error, file }, 'worker.json is corrupt; generating a new worker id');
    }
  }
  const workerId = WorkerIdSchema.parse(randomUUID());
  await mkdir(dir, { recursive: true });
  // Worker state, logs and tool output never belong in the project's history.
  await writeFile(join(dir, '.gitignore'), '*\n', { flag: 'wx' }).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'EEXIST') throw error;
  });
  await writeFileAtomic(file, `${JSON.stringify({ workerId, createdAt: new Date().toISOString() }, null, 2)}\n`);
  return workerId;
}

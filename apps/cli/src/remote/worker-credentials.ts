import { join } from 'node:path';
import { z } from 'zod';
import { currentMolfPaths } from '../current-molf-paths.ts';
import { privateJsonFile } from './private-json-file.ts';
import { serverKey } from './server-key.ts';

const WorkerCredentialSchema = z.object({
  token: z.string().min(1),
  /** The credential's name on the server (`molf token list`). */
  name: z.string(),
  credentialId: z.string(),
  savedAt: z.string(),
});
export type WorkerCredential = z.infer<typeof WorkerCredentialSchema>;

const WorkerCredentialsFileSchema = z.object({
  version: z.literal(1),
  /** By `<server> <workdir>`: each worker of this machine has its own, revocable alone. */
  workers: z.record(z.string(), WorkerCredentialSchema),
});
type WorkerCredentialsFile = z.infer<typeof WorkerCredentialsFileSchema>;

/**
 * `worker-credentials.json` (0600) in the client dir: the worker tokens `molf worker --pair` got,
 * one per server and workdir, so the next start of that worker needs no flag. The client dir is
 * hidden from sandboxed commands.
 */
export function workerCredentials(clientDir: string = currentMolfPaths().clientDir) {
  const file = privateJsonFile<WorkerCredentialsFile>(
    join(clientDir, 'worker-credentials.json'),
    WorkerCredentialsFileSchema,
    () => ({ version: 1, workers: {} }),
  );
  const keyOf = (url: string, workdir: string) => `${serverKey(url)} ${workdir}`;
  return {
    path: file.path,
    async get(url: string, workdir: string): Promise<WorkerCredential | undefined> {
      return (await file.read()).workers[keyOf(url, workdir)];
    },
    async save(url: string, workdir: string, credential: WorkerCredential): Promise<void> {
      await file.update((value) => {
        value.workers[keyOf(url, workdir)] = credential;
      });
    },
  };
}

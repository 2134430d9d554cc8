import { mkdir } from 'node:fs/promises';

/**
 * Creates the data directory, private to its owner. Where it is by default is the CLI's to say
 * (`resolveMolfPaths` in @molf/worker/molf-paths): the server is always given one.
 */
export async function ensureDataDir(dataDir: string): Promise<void> {
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
}

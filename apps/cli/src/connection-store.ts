import { mkdir, readFile, realpath } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import writeFileAtomic from 'write-file-atomic';
import { z } from 'zod';

const SavedConnectionSchema = z.object({ url: z.string(), token: z.string(), savedAt: z.string() });
export type SavedConnection = z.infer<typeof SavedConnectionSchema>;

const ConnectionsFileSchema = z.object({
  version: z.literal(1),
  connections: z.record(z.string(), SavedConnectionSchema),
});

/** `MOLF_CLIENT_DIR` if set, else `~/.molf`. Holds `connections.json` (mode 0600). */
export function clientDir(env: NodeJS.ProcessEnv = process.env): string {
  const fromEnv = env.MOLF_CLIENT_DIR;
  return fromEnv !== undefined && fromEnv !== '' ? resolve(fromEnv) : join(homedir(), '.molf');
}

function connectionsFile(env: NodeJS.ProcessEnv): string {
  return join(clientDir(env), 'connections.json');
}

async function readConnections(env: NodeJS.ProcessEnv): Promise<Record<string, SavedConnection>> {
  let text: string;
  try {
    text = await readFile(connectionsFile(env), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw error;
  }
  try {
    return ConnectionsFileSchema.parse(JSON.parse(text)).connections;
  } catch {
    // A damaged file only loses saved shortcuts; flags and env still work, and the next save rewrites it.
    return {};
  }
}

async function canonical(dir: string): Promise<string> {
  try {
    return await realpath(dir);
  } catch {
    return resolve(dir);
  }
}

/** Saves how to reach the server that `molf up` started for `projectDir`. */
export async function saveConnection(options: {
  projectDir: string;
  url: string;
  token: string;
  env?: NodeJS.ProcessEnv;
}): Promise<string> {
  const env = options.env ?? process.env;
  const connections = await readConnections(env);
  connections[await canonical(options.projectDir)] = {
    url: options.url,
    token: options.token,
    savedAt: new Date().toISOString(),
  };
  const file = connectionsFile(env);
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  await writeFileAtomic(file, `${JSON.stringify({ version: 1, connections }, null, 2)}\n`, { mode: 0o600 });
  return file;
}

/** A saved connection and the project directory it was saved for. */
export type FoundConnection = SavedConnection & { projectDir: string; file: string };

/** The connection saved for exactly `projectDir` (not an ancestor): what `molf up` saved there last time. */
export async function loadConnection(
  projectDir: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<SavedConnection | undefined> {
  return (await readConnections(env))[await canonical(projectDir)];
}

/** The connection saved for `dir` or its nearest ancestor, so subdirectories of a project work too. */
export async function findConnection(
  dir: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<FoundConnection | undefined> {
  const connections = await readConnections(env);
  let current = await canonical(dir);
  for (;;) {
    const found = connections[current];
    if (found !== undefined) return { ...found, projectDir: current, file: connectionsFile(env) };
    const parent = dirname(current);
    if (parent === current) return undefined;
    current = parent;
  }
}

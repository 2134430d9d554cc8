import * as fs from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { resolveMolfPaths } from '@molf/worker/molf-paths';

/**
 * This module is part of the `molf up` supervisor, which loads nothing but Node's built-ins (see
 * scripts/build-cli.ts): the file's three-field shape is checked by hand, not by zod, whose 16 MiB
 * would triple what the supervisor holds; the file is replaced atomically without write-file-atomic
 * (and the signal handlers and hashing it brings); and the calls are node:fs's own, promisified, as
 * loading node:fs/promises costs the supervisor another 0.9 MiB.
 */
const readFile = promisify(fs.readFile);
const realpath = promisify(fs.realpath);
const mkdir = promisify(fs.mkdir);
const open = promisify(fs.open);
const writeFile = promisify(fs.writeFile);
const fdatasync = promisify(fs.fdatasync);
const close = promisify(fs.close);
const rename = promisify(fs.rename);
const rm = promisify(fs.rm);

export type SavedConnection = { url: string; token: string; savedAt: string };

function isSavedConnection(value: unknown): value is SavedConnection {
  if (typeof value !== 'object' || value === null) return false;
  const { url, token, savedAt } = value as Record<string, unknown>;
  return typeof url === 'string' && typeof token === 'string' && typeof savedAt === 'string';
}

/** The connections of a `connections.json` (version 1), or undefined when any part is malformed. */
export function parseConnectionsFile(value: unknown): Record<string, SavedConnection> | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { version, connections } = value as Record<string, unknown>;
  if (version !== 1 || typeof connections !== 'object' || connections === null || Array.isArray(connections)) {
    return undefined;
  }
  const entries = Object.entries(connections);
  if (!entries.every(([, connection]) => isSavedConnection(connection))) return undefined;
  return Object.fromEntries(entries) as Record<string, SavedConnection>;
}

/** `connections.json` (mode 0600) in the client dir: `$MOLF_CLIENT_DIR`, else `$MOLF_HOME`, else `$XDG_STATE_HOME/molf`. */
function connectionsFile(env: NodeJS.ProcessEnv): string {
  return join(resolveMolfPaths({ env, home: homedir() }).clientDir, 'connections.json');
}

async function readConnections(env: NodeJS.ProcessEnv): Promise<Record<string, SavedConnection>> {
  let text: string;
  try {
    text = await readFile(connectionsFile(env), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw error;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  // A damaged file only loses saved shortcuts; flags and env still work, and the next save rewrites it.
  return parseConnectionsFile(parsed) ?? {};
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
  await replaceFile(file, `${JSON.stringify({ version: 1, connections }, null, 2)}\n`);
  return file;
}

/**
 * Writes `text` to a new file beside `file` (0600 from its creation), flushes it to disk and renames
 * it over `file`: a reader sees the old content or the new, never a part, and a crash leaves at most
 * a stray temporary file.
 */
export async function replaceFile(file: string, text: string): Promise<void> {
  const temporary = `${file}.${process.pid}.${Date.now()}.tmp`;
  try {
    const fd = await open(temporary, 'wx', 0o600);
    try {
      await writeFile(fd, text);
      await fdatasync(fd);
    } finally {
      await close(fd);
    }
    await rename(temporary, file);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
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

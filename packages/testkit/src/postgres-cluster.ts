import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { chmod, chown, mkdtemp, open, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { stopProcessGroup } from './stop-process-group.ts';

/**
 * A throw-away PostgreSQL cluster on a loopback port, from Debian's `postgresql` package (installed
 * by `.ci/run`): its binaries are the distribution's maintained build, and nothing is downloaded
 * at test time. Run by the `postgres` system user when the tests run as root (PostgreSQL refuses
 * root). Stopped and removed by `close()`.
 */
export type PostgresCluster = AsyncDisposable & {
  /** The superuser's URL on the `postgres` database (user `molf`, a password: host auth is scram). */
  url: string;
  port: number;
  /** The superuser's password, for tests that build URLs of their own. */
  password: string;
  /** A new empty database; its URL. */
  createDatabase(name?: string): Promise<string>;
  dropDatabase(name: string): Promise<void>;
  /** Stops the server (fast shutdown: clients are disconnected); the data stays. */
  stop(): Promise<void>;
  /** Starts it again on the same port after `stop()`. */
  start(): Promise<void>;
  /** Stops it for good and removes its files. Idempotent. */
  close(): Promise<void>;
};

export type PostgresClusterOptions = {
  /**
   * Whether commits wait for the disk. Default false: tests care about behaviour, and a loaded
   * machine's disk is slow; benchmarks pass true to measure what a real deployment pays.
   */
  durable?: boolean;
  /** Default 200. */
  maxConnections?: number;
};

const SUPERUSER = 'molf';
/** How long a start may take on a loaded machine before it counts as failed. */
const START_DEADLINE_MS = 60_000;

/** The directory of the newest installed PostgreSQL's programs; undefined when none is installed. */
export function findPostgresPrograms(): string | undefined {
  try {
    const bin = execFileSync('pg_config', ['--bindir'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    if (existsSync(join(bin.trim(), 'initdb'))) return bin.trim();
  } catch {
    // no pg_config: look where Debian puts the servers
  }
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((name) => /^\d+$/.test(name) && existsSync(join(root, name, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? undefined : join(root, versions[0], 'bin');
}

/** Root may not run PostgreSQL: its programs then run as the `postgres` user. */
function runAs(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const line = execFileSync('getent', ['passwd', 'postgres'], { encoding: 'utf8' }).trim();
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}

function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolvePort(typeof address === 'object' && address !== null ? address.port : 0));
    });
  });
}

function run(program: string, args: string[], user: { uid: number; gid: number } | undefined): Promise<void> {
  return new Promise((resolveRun, reject) => {
    const child = spawn(program, args, { stdio: ['ignore', 'ignore', 'pipe'], ...(user ?? {}) });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolveRun() : reject(new Error(`${program} failed (${code}): ${stderr.trim()}`)),
    );
  });
}

export async function startPostgresCluster(options: PostgresClusterOptions = {}): Promise<PostgresCluster> {
  const programs = findPostgresPrograms();
  if (programs === undefined) {
    throw new Error('PostgreSQL is not installed (apt-get install postgresql): no initdb found');
  }
  const user = runAs();
  const home = await mkdtemp(join(tmpdir(), 'molf-pg-'));
  const dataDir = join(home, 'data');
  const password = randomBytes(12).toString('hex');
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  let port = 0;
  let closed = false;

  async function cleanUp(): Promise<void> {
    await rm(home, { recursive: true, force: true });
  }

  try {
    if (user !== undefined) await chown(home, user.uid, user.gid);
    await chmod(home, 0o700);
    const passwordFile = join(home, 'password');
    await writeFile(passwordFile, `${password}\n`, { mode: 0o600 });
    if (user !== undefined) await chown(passwordFile, user.uid, user.gid);
    await run(
      join(programs, 'initdb'),
      [
        '-D',
        dataDir,
        '-U',
        SUPERUSER,
        `--pwfile=${passwordFile}`,
        '--auth-local=trust',
        '--auth-host=scram-sha-256',
        '-E',
        'UTF8',
        '--no-locale',
        '--no-sync',
      ],
      user,
    );
  } catch (error) {
    await cleanUp();
    throw error;
  }

  const settings = [
    '-c',
    'listen_addresses=127.0.0.1',
    '-c',
    `unix_socket_directories=${home}`,
    '-c',
    `max_connections=${options.maxConnections ?? 200}`,
    ...(options.durable === true
      ? []
      : ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off']),
  ];

  const urlOf = (database: string) =>
    `postgres://${SUPERUSER}:${password}@127.0.0.1:${port}/${encodeURIComponent(database)}`;

  async function waitReady(): Promise<void> {
    const deadline = Date.now() + START_DEADLINE_MS;
    for (;;) {
      const sql = postgres(urlOf('postgres'), { max: 1, connect_timeout: 5, onnotice: () => {} });
      try {
        await sql`select 1`;
        return;
      } catch (error) {
        if (Date.now() > deadline || child?.exitCode !== null) {
          const log = await readFile(join(home, 'server.log'), 'utf8').catch(() => '');
          throw new Error(`PostgreSQL did not start (${(error as Error).message}):\n${log.slice(-2_000)}`);
        }
        await new Promise((resolveWait) => setTimeout(resolveWait, 100));
      } finally {
        await sql.end({ timeout: 1 });
      }
    }
  }

  async function launch(): Promise<void> {
    const log = await open(join(home, 'server.log'), 'a', 0o600);
    try {
      if (user !== undefined) await log.chown(user.uid, user.gid);
      const started = spawn(join(programs as string, 'postgres'), ['-D', dataDir, '-p', String(port), ...settings], {
        detached: true,
        stdio: ['ignore', log.fd, log.fd],
        ...(user ?? {}),
      });
      child = started;
      exited = new Promise((resolveExit) => started.once('exit', () => resolveExit()));
    } finally {
      await log.close();
    }
    await waitReady();
  }

  async function start(): Promise<void> {
    if (port !== 0) return launch();
    // Another process may take the free port first: a few tries with fresh ones.
    for (let attempt = 1; ; attempt += 1) {
      port = await freePort();
      try {
        await launch();
        return;
      } catch (error) {
        await stopChild();
        if (attempt >= 3) throw error;
      }
    }
  }

  async function stopChild(): Promise<void> {
    const running = child;
    if (running === undefined || running.exitCode !== null || running.signalCode !== null) return;
    // SIGINT is PostgreSQL's fast shutdown; the group's SIGKILL follows if it hangs.
    try {
      process.kill(running.pid as number, 'SIGINT');
    } catch {
      // gone already
    }
    await stopProcessGroup({ pid: running.pid, exited, graceMs: 15_000 });
  }

  async function admin<T>(task: (sql: postgres.Sql) => Promise<T>): Promise<T> {
    const sql = postgres(urlOf('postgres'), { max: 1, onnotice: () => {} });
    try {
      return await task(sql);
    } finally {
      await sql.end({ timeout: 5 });
    }
  }

  try {
    await start();
  } catch (error) {
    await stopChild();
    await cleanUp();
    throw error;
  }

  async function close(): Promise<void> {
    if (closed) return;
    closed = true;
    await stopChild();
    await cleanUp();
  }

  return {
    get url() {
      return urlOf('postgres');
    },
    get port() {
      return port;
    },
    password,
    async createDatabase(name) {
      const database = name ?? `molf_${randomBytes(6).toString('hex')}`;
      await admin((sql) => sql.unsafe(`create database "${database.replaceAll('"', '""')}"`));
      return urlOf(database);
    },
    async dropDatabase(name) {
      await admin((sql) => sql.unsafe(`drop database if exists "${name.replaceAll('"', '""')}" with (force)`));
    },
    stop: stopChild,
    start,
    close,
    [Symbol.asyncDispose]: close,
  };
}

/**
 * A new empty database in the cluster at `adminUrl` (a superuser's URL); dropped, with its
 * connections, on dispose.
 */
export async function createScratchDatabase(
  adminUrl: string,
): Promise<AsyncDisposable & { url: string; name: string }> {
  const name = `molf_test_${randomBytes(5).toString('hex')}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`create database ${name}`);
  } finally {
    await admin.end({ timeout: 5 });
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    async [Symbol.asyncDispose]() {
      const dropper = postgres(adminUrl, { max: 1, onnotice: () => {} });
      try {
        await dropper.unsafe(`drop database if exists ${name} with (force)`);
      } finally {
        await dropper.end({ timeout: 5 });
      }
    },
  };
}

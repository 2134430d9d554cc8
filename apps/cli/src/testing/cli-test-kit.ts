import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createServer, type MolfServer } from '@molf/server';
import { stopProcessGroup, TEST_RUN_ENV } from '@molf/testkit';
import { createWorker, type MolfWorker, prepareSandbox } from '@molf/worker';
import { execa, execaNode, type Options, type ResultPromise } from 'execa';
import { afterEach, onTestFinished } from 'vitest';

/** What users run (scripts/molf execs it): the bundle, rebuilt by the tests' global setup when stale. */
export const CLI = fileURLToPath(new URL('../../bin/molf.js', import.meta.url));

/** Cleanups run after each test, last first. */
export type Cleanups = Array<() => Promise<unknown>>;

/** A test file's cleanups and temporary directories: see {@link useTestScope}. */
export type TestScope = {
  cleanups: Cleanups;
  /** A new directory under the system's temp dir, removed after the test. */
  tempDir(): Promise<string>;
};

/**
 * Call once at the top of a test file: after each test, the processes it started are stopped
 * (with their groups, terminals included) first, then its cleanups run, last first, and its temporary directories
 * (named `molf-<prefix>-…`) are removed.
 */
export function useTestScope(prefix: string): TestScope {
  const cleanups: Cleanups = [];
  afterEach(async () => {
    await stopSpawnedProcesses();
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  return {
    cleanups,
    async tempDir() {
      const path = await mkdtemp(join(tmpdir(), `molf-${prefix}-`));
      cleanups.push(() => rm(path, { recursive: true, force: true }));
      return path;
    },
  };
}

/**
 * `molf <args>` as a child that leads its own process group, stopped with the whole group (SIGTERM,
 * then SIGKILL after a grace) when the test that started it ends, passed, failed or timed out.
 * Never rejects: the result carries the exit code and output. No time limit of its own: a test
 * waits on what the child prints, with generous deadlines.
 */
export function spawnMolf(
  args: string[],
  options: Pick<Options, 'cwd' | 'env' | 'nodeOptions' | 'extendEnv'> & {
    /** Default `ignore` (`/dev/null`). */
    stdin?: 'ignore' | 'pipe';
    /** Written to the child's stdin (a pipe, then closed), as in `echo … | molf`. Default none. */
    input?: string | Uint8Array;
  } = {},
) {
  const { stdin, input, ...rest } = options;
  const child = execaNode(CLI, args, {
    ...rest,
    env: withTestRunMarker(options.env),
    ...(input === undefined ? { stdin: stdin ?? 'ignore' } : { input }),
    reject: false,
    // Its own process group: stopping the group also stops what it started (server, worker, tools).
    detached: true,
  });
  stopChildWhenTestEnds(child);
  return child;
}

/** Stops of the processes started by the running test, not yet stopped. */
const running = new Set<() => Promise<void>>();

/**
 * Stops every process the running test started, with its group. The kits call it when the test
 * finishes (also when it failed or timed out); test files whose `afterEach` removes directories
 * those processes use call it first, since `afterEach` runs before `onTestFinished`.
 */
export async function stopSpawnedProcesses(): Promise<void> {
  await Promise.all([...running].map((stop) => stop()));
}

/**
 * Runs `stop` once when the running test ends (passed, failed or timed out), and with
 * {@link stopSpawnedProcesses} before a {@link useTestScope}'s cleanups, so nothing a test started
 * still writes into the directories those cleanups remove.
 */
export function stopWhenTestEnds(stop: () => Promise<void>): void {
  let stopped: Promise<void> | undefined;
  const once = () => {
    stopped ??= stop().finally(() => running.delete(once));
    return stopped;
  };
  running.add(once);
  onTestFinished(once);
}

function stopChildWhenTestEnds(child: { pid?: number | undefined } & PromiseLike<unknown>): void {
  stopWhenTestEnds(() => stopProcessGroup({ pid: child.pid, exited: child }));
}

/** Any other program (e.g. `scripts/molf`), started and stopped like {@link spawnMolf}. */
export function spawnCommand(
  file: string,
  args: string[],
  options: Pick<Options, 'cwd' | 'env' | 'extendEnv'> & { stdin?: 'ignore' | 'pipe' } = {},
) {
  const child = execa(file, args, {
    ...options,
    env: withTestRunMarker(options.env),
    stdin: options.stdin ?? 'ignore',
    reject: false,
    detached: true,
  });
  stopChildWhenTestEnds(child);
  return child;
}

/** The run's marker goes along even into an environment built from scratch (`extendEnv: false`). */
function withTestRunMarker(env: Options['env']): Options['env'] {
  const marker = process.env[TEST_RUN_ENV];
  return marker === undefined ? env : { ...env, [TEST_RUN_ENV]: marker };
}

export type MolfProcess = ReturnType<typeof spawnMolf>;

/** Resolves once `predicate` holds. The deadline is generous: a loaded machine must not fail a test. */
export async function waitUntil(
  predicate: () => boolean | Promise<boolean>,
  options: { what: string | (() => string); timeoutMs?: number },
): Promise<void> {
  const deadline = Date.now() + (options.timeoutMs ?? WAIT_DEADLINE_MS);
  while (!(await predicate())) {
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${typeof options.what === 'string' ? options.what : options.what()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** How long a test waits for something a process will do, before it gives up. */
export const WAIT_DEADLINE_MS = 120_000;

/**
 * What a child writes on stdout and stderr, interleaved, and `seen` to wait for a text in it: it
 * resolves once the text is there, and fails when the child exits without it or at the deadline.
 */
export function captureOutput(
  child: { stdout: NodeJS.ReadableStream | null; stderr: NodeJS.ReadableStream | null } & PromiseLike<unknown>,
): {
  text: () => string;
  seen: (text: string, options?: { after?: number }) => Promise<void>;
  /** Times `text` appears, after offset `after` (default 0). */
  count: (text: string, options?: { after?: number }) => number;
} {
  let output = '';
  let exited = false;
  const append = (chunk: Buffer) => {
    output += chunk.toString();
  };
  child.stdout?.on('data', append);
  child.stderr?.on('data', append);
  void child.then(() => {
    exited = true;
  });
  const count = (text: string, options: { after?: number } = {}) =>
    output.slice(options.after ?? 0).split(text).length - 1;
  return {
    text: () => output,
    count,
    async seen(text, options = {}) {
      await waitUntil(
        () => {
          if (count(text, options) > 0) return true;
          if (exited) throw new Error(`exited without printing "${text}":\n${output}`);
          return false;
        },
        { what: () => `"${text}" in:\n${output}` },
      );
    },
  };
}

/** A `config.jsonc` in `home` with the fake LLM as the default model. */
export async function writeFakeModelConfig(home: string, baseURL: string): Promise<void> {
  await writeFile(join(home, 'config.jsonc'), JSON.stringify({ model: 'fake/m', providers: { fake: { baseURL } } }));
}

/**
 * `molf server <args>` as a real child process (stopped with its group when the test ends),
 * resolved with its URL once it prints that it listens; rejected with its stderr if it exits first.
 */
export async function spawnListeningServer(
  args: string[],
  options: { env?: NodeJS.ProcessEnv } = {},
): Promise<{ child: MolfProcess; url: string }> {
  const child = spawnMolf(['server', ...args], options.env === undefined ? {} : { env: options.env });
  const url = await new Promise<string>((resolve, reject) => {
    let seen = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
      const match = /listening on (wss?:\/\/\S+)/.exec(seen);
      if (match?.[1] !== undefined) resolve(match[1]);
    });
    void child.then((result) => reject(new Error(`the server exited: ${result.stderr}`)));
  });
  return { child, url };
}

/** A server on port 0 (the fake LLM as its model) and a worker on `workdir`, in this process. */
export async function startLocalServer(
  cleanups: Cleanups,
  options: { dataDir: string; workdir: string; llmBaseURL: string; tokenSuffix: string },
): Promise<{ server: MolfServer; worker: MolfWorker; tokens: { client: string; worker: string } }> {
  const tokens = { client: `molf_c_${options.tokenSuffix}`, worker: `molf_w_${options.tokenSuffix}` };
  const server = await createServer({
    port: 0,
    dataDir: options.dataDir,
    tokens,
    models: { defaultModel: 'fake/m', custom: { fake: { baseURL: options.llmBaseURL } } },
  });
  cleanups.push(() => server.close());
  const worker = await createWorker({ serverUrl: server.url, token: tokens.worker, workdir: options.workdir });
  cleanups.push(() => worker.close());
  await worker.registered;
  return { server, worker, tokens };
}

/**
 * The CLI as a child with a pipe on stdin (stopped with its process group when the test ends);
 * `seen` waits for text on its stdout, with a generous deadline.
 */
export function spawnInteractive(
  args: string[],
  options: { cwd: string; env: Record<string, string> },
): { child: MolfProcess; seen: (text: string) => Promise<void>; type: (line: string) => void; output: () => string } {
  const child = spawnMolf(args, { cwd: options.cwd, env: options.env, stdin: 'pipe' });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const seen = (text: string) => waitUntil(() => output.includes(text), { what: () => `"${text}" in:\n${output}` });
  return { child, seen, type: (line) => void child.stdin?.write(`${line}\n`), output: () => output };
}

/**
 * Resolves with the output seen so far once it contains `text` (stdout; stderr too with
 * `stderr: true`); rejects if the child exits first.
 */
export function waitForOutput(child: ResultPromise, text: string, options: { stderr?: boolean } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const onData = (chunk: Buffer) => {
      seen += chunk.toString();
      if (seen.includes(text)) resolve(seen);
    };
    child.stdout?.on('data', onData);
    if (options.stderr === true) child.stderr?.on('data', onData);
    void child.then((result) =>
      reject(new Error(`exited before printing "${text}": ${options.stderr === true ? '' : result.stderr}\n${seen}`)),
    );
  });
}

/**
 * Why the sandbox cannot run here (its self-test failed), for tests to skip with it printed; or
 * undefined. Under CI=true the sandbox tests must run: a reason is an error instead, and the test
 * file fails to load.
 */
export async function sandboxUnavailable(options: { env?: NodeJS.ProcessEnv } = {}): Promise<string | undefined> {
  const env = options.env ?? process.env;
  const workdir = await realpath(await mkdtemp(join(tmpdir(), 'molf-sandbox-probe-')));
  let reason: string | undefined;
  try {
    const prepared = await prepareSandbox({ config: { mode: 'on' }, workdir, env });
    reason = prepared.status.active ? undefined : `the sandbox cannot run here: ${prepared.status.selfTest?.failed}`;
  } finally {
    await rm(workdir, { recursive: true, force: true });
  }
  if (reason !== undefined && env.CI === 'true') {
    throw new Error(`CI=true, so the sandbox tests must run, but they cannot: ${reason}`);
  }
  return reason;
}

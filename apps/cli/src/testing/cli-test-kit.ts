import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createServer, type MolfServer } from '@molf/server';
import { createWorker, type MolfWorker, prepareSandbox } from '@molf/worker';
import { execaNode, type ResultPromise } from 'execa';

/** What users run (scripts/molf execs it): the bundle, rebuilt by the tests' global setup when stale. */
export const CLI = fileURLToPath(new URL('../../bin/molf.js', import.meta.url));

/** Cleanups run after each test, last first. */
export type Cleanups = Array<() => Promise<unknown>>;

/** A `config.jsonc` in `home` with the fake LLM as the default model. */
export async function writeFakeModelConfig(home: string, baseURL: string): Promise<void> {
  await writeFile(join(home, 'config.jsonc'), JSON.stringify({ model: 'fake/m', providers: { fake: { baseURL } } }));
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

/** The CLI as a child with a pipe on stdin; `seen` waits for text on its stdout. */
export function spawnInteractive(
  cleanups: Cleanups,
  args: string[],
  options: { cwd: string; env: Record<string, string>; waitMs?: number },
): { child: ResultPromise; seen: (text: string) => Promise<void>; type: (line: string) => void; output: () => string } {
  const child = execaNode(CLI, args, {
    cwd: options.cwd,
    env: options.env,
    reject: false,
    stdin: 'pipe',
    timeout: 60_000,
  });
  cleanups.push(async () => {
    child.kill('SIGKILL');
    await child;
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const seen = async (text: string) => {
    const deadline = Date.now() + (options.waitMs ?? 20_000);
    while (!output.includes(text)) {
      if (Date.now() > deadline) throw new Error(`no "${text}" in:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
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

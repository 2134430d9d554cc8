import { accessSync, constants, mkdirSync } from 'node:fs';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { findBwrap } from './find-bwrap.ts';
import { prepareSandbox } from './prepare-sandbox.ts';
import type { SandboxConfig } from './sandbox-config.ts';

/**
 * A temp directory outside /tmp: inside the sandbox /tmp is private, so a host path under /tmp is
 * hidden anyway and would prove nothing. /var/tmp where it is writable, else ~/.cache.
 */
export async function outsideTmpDir(prefix: string): Promise<AsyncDisposable & { path: string }> {
  let base = '/var/tmp';
  try {
    accessSync(base, constants.W_OK);
  } catch {
    base = join(homedir(), '.cache', 'molf-test');
    mkdirSync(base, { recursive: true });
  }
  const path = await realpath(await mkdtemp(join(base, prefix)));
  return { path, [Symbol.asyncDispose]: () => rm(path, { recursive: true, force: true }) };
}

/** A temp directory (under the OS temp dir), canonical, removed on dispose. */
export async function tempDir(prefix: string): Promise<AsyncDisposable & { path: string }> {
  const path = await realpath(await mkdtemp(join(tmpdir(), prefix)));
  return { path, [Symbol.asyncDispose]: () => rm(path, { recursive: true, force: true }) };
}

/**
 * Under CI=true the sandbox tests must run: a reason to skip them is an error (the test file fails
 * to load, loudly) instead. Elsewhere the reason is returned, for the tests to skip with it printed.
 */
export function skipOrFailInCi(reason: string | undefined, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (reason !== undefined && env.CI === 'true') {
    throw new Error(`CI=true, so the sandbox tests must run, but they cannot: ${reason}`);
  }
  return reason;
}

/**
 * Why bwrap cannot run sandboxes here, or undefined when it can: tests that need it skip with
 * this reason (printed), never silently; under CI=true this throws instead (skipOrFailInCi).
 */
export async function bwrapUnavailable(options: { env?: NodeJS.ProcessEnv } = {}): Promise<string | undefined> {
  const env = options.env ?? process.env;
  return skipOrFailInCi(await whyBwrapCannotRun(env), env);
}

async function whyBwrapCannotRun(env: NodeJS.ProcessEnv): Promise<string | undefined> {
  if (process.platform !== 'linux') return `the sandbox needs Linux (this is ${process.platform})`;
  if (findBwrap(env) === undefined) return 'bwrap is not on PATH (apt-get install bubblewrap)';
  await using workdir = await tempDir('molf-bwrap-probe-');
  const prepared = await prepareSandbox({
    config: { mode: 'on' } satisfies SandboxConfig,
    workdir: workdir.path,
    env,
  });
  return prepared.status.active ? undefined : `bwrap cannot run a sandbox here: ${prepared.status.selfTest?.failed}`;
}

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
 * Why bwrap cannot run sandboxes here, or undefined when it can: tests that need it skip with
 * this reason (printed), never silently.
 */
export async function bwrapUnavailable(): Promise<string | undefined> {
  if (process.platform !== 'linux') return `the sandbox needs Linux (this is ${process.platform})`;
  if (findBwrap(process.env) === undefined) return 'bwrap is not on PATH (apt-get install bubblewrap)';
  await using workdir = await tempDir('molf-bwrap-probe-');
  const prepared = await prepareSandbox({
    config: { mode: 'on' } satisfies SandboxConfig,
    workdir: workdir.path,
    env: process.env,
  });
  return prepared.status.active ? undefined : `bwrap cannot run a sandbox here: ${prepared.status.selfTest?.failed}`;
}

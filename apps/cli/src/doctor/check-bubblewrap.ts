import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { prepareSandbox } from '@molf/worker';
import type { DoctorCheck } from './doctor-check.ts';
import { findExecutable } from './find-executable.ts';

/** bwrap's own words when the kernel or a policy refuses it the user namespace it needs. */
const NAMESPACE_REFUSED = /namespace|uid map|Operation not permitted|Permission denied/i;

/**
 * bubblewrap, which the worker's `--sandbox` runs commands in: installed, and proven to work by
 * the worker's own self-test (a sandbox on a scratch directory that must stop a write outside it,
 * hide a secret and its process). Missing is a warning (the sandbox is off unless asked for);
 * installed but failing is an error: a worker asked for the sandbox would run without it.
 */
export async function checkBubblewrap(env: NodeJS.ProcessEnv): Promise<DoctorCheck> {
  if (process.platform !== 'linux') {
    return { id: 'bubblewrap', status: 'skipped', summary: `the sandbox needs Linux (this is ${process.platform})` };
  }
  const bwrap = await findExecutable('bwrap', { env, cwd: process.cwd() });
  if (!bwrap.found) {
    return {
      id: 'bubblewrap',
      status: 'warning',
      summary: 'bubblewrap (bwrap) is not on PATH: --sandbox cannot run commands in a sandbox',
      fix: 'install bubblewrap: `sudo apt-get install bubblewrap` (Debian, Ubuntu), `sudo dnf install bubblewrap`',
    };
  }
  const workdir = await realpath(await mkdtemp(join(tmpdir(), 'molf-doctor-sandbox-')));
  try {
    const { status } = await prepareSandbox({ config: { mode: 'on' }, workdir, env });
    if (status.active)
      return { id: 'bubblewrap', status: 'ok', summary: `bubblewrap ${bwrap.path}: the sandbox self-test passes` };
    const failed = status.selfTest?.failed ?? 'unknown reason';
    return {
      id: 'bubblewrap',
      status: 'error',
      summary: `bubblewrap ${bwrap.path} is installed but the sandbox self-test fails: ${failed}`,
      fix: NAMESPACE_REFUSED.test(failed)
        ? 'allow unprivileged user namespaces: on Ubuntu 24.04 `sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0` ' +
          '(or an AppArmor profile for bwrap); in a container, run it with user namespaces allowed'
        : "run `bwrap --ro-bind / / true` to see bubblewrap's own error; until it works a worker runs commands without the sandbox",
    };
  } finally {
    await rm(workdir, { recursive: true, force: true });
  }
}

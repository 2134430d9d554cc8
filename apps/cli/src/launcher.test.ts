import { execFile } from 'node:child_process';
import { chmod, copyFile, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { execa, type ResultPromise } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { spawnCommand, stopSpawnedProcesses, WAIT_DEADLINE_MS } from './testing/cli-test-kit.ts';

const LAUNCHER = fileURLToPath(new URL('../../../scripts/molf', import.meta.url));
const cleanups: Array<() => Promise<unknown>> = [];

afterEach(async () => {
  // The processes first: the cleanups remove directories they use.
  await stopSpawnedProcesses();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Pids of the processes whose command line contains `text` (this machine's `ps`). */
async function processesNaming(text: string): Promise<number[]> {
  const { stdout } = await promisify(execFile)('ps', ['-A', '-o', 'pid=,args=']);
  return stdout
    .split('\n')
    .filter((line) => line.includes(text))
    .map((line) => Number.parseInt(line.trim(), 10));
}

async function waitFor(predicate: () => Promise<boolean>, what: string): Promise<void> {
  // Generous: the machine is shared and slow; this is a deadline, not a measurement.
  const deadline = Date.now() + WAIT_DEADLINE_MS;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** `scripts/molf server` on port 0 with a temp data dir, in its own process group, once it listens. */
async function startServerThroughLauncher(): Promise<{ launcher: ResultPromise; dataDir: string }> {
  const dataDir = await mkdtemp(join(tmpdir(), 'molf-launcher-'));
  cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
  const launcher = execa(LAUNCHER, ['server', '--port', '0', '--data-dir', dataDir], {
    env: { MOLF_LOG_FILE: 'none', MOLF_LOG_LEVEL: 'warn', MOLF_CLIENT_DIR: dataDir },
    cwd: tmpdir(),
    reject: false,
    stdin: 'ignore',
    detached: true,
  });
  cleanups.push(async () => {
    // The whole group: whatever the launcher left behind goes too.
    try {
      process.kill(-(launcher.pid as number), 'SIGKILL');
    } catch {
      // already gone
    }
    await launcher;
  });
  await new Promise<void>((resolve, reject) => {
    let seen = '';
    launcher.stdout?.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
      if (seen.includes('listening on')) resolve();
    });
    void launcher.then((result) => reject(new Error(`the server exited: ${result.stderr}`)));
  });
  return { launcher, dataDir };
}

describe.each(['SIGTERM', 'SIGKILL'] as const)('scripts/molf sent %s', (signal) => {
  it('is the node process itself, so the signal ends the server', async () => {
    const { launcher, dataDir } = await startServerThroughLauncher();
    // One process, the launcher's own pid: no shell left in between to take the signal alone.
    expect(await processesNaming(dataDir)).toEqual([launcher.pid]);

    process.kill(launcher.pid as number, signal);
    await waitFor(async () => (await processesNaming(dataDir)).length === 0, `no process naming ${dataDir}`);
    const ended = await launcher;
    // SIGTERM is the server's clean shutdown; SIGKILL can't be caught.
    expect(signal === 'SIGTERM' ? ended.exitCode : ended.signal).toBe(signal === 'SIGTERM' ? 0 : 'SIGKILL');
  });
});

describe('scripts/molf without node_modules', () => {
  /** A copy of the launcher in a temp root whose apps/ is this checkout's, with no node_modules. */
  async function launcherWithoutNodeModules(): Promise<{ launcher: string; bin: string }> {
    const root = await mkdtemp(join(tmpdir(), 'molf-launcher-root-'));
    cleanups.push(() => rm(root, { recursive: true, force: true }));
    await mkdir(join(root, 'scripts'));
    await mkdir(join(root, 'bin'));
    await copyFile(LAUNCHER, join(root, 'scripts', 'molf'));
    await symlink(fileURLToPath(new URL('../../../apps', import.meta.url)), join(root, 'apps'));
    return { launcher: join(root, 'scripts', 'molf'), bin: join(root, 'bin') };
  }

  it('runs the CLI with a node from PATH', async () => {
    const { launcher, bin } = await launcherWithoutNodeModules();
    await symlink(process.execPath, join(bin, 'node'));
    const result = await spawnCommand(launcher, ['workers', '--help'], {
      env: { PATH: `${bin}${delimiter}${process.env.PATH ?? ''}` },
    });
    expect(result.stderr).toBe('');
    expect(result.stdout).toContain('Usage: molf workers');
  });

  it('refuses a node on PATH older than 22, saying what to do', async () => {
    const { launcher, bin } = await launcherWithoutNodeModules();
    await writeFile(join(bin, 'node'), '#!/bin/sh\necho 18\n');
    await chmod(join(bin, 'node'), 0o755);
    const result = await spawnCommand(launcher, ['workers', '--help'], {
      env: { PATH: `${bin}${delimiter}${process.env.PATH ?? ''}` },
    });
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain('needs Node.js >= 22');
  });
});

import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readlink, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { spawnMolf, stopSpawnedProcesses, waitForOutput } from '../testing/cli-test-kit.ts';

const made: string[] = [];
afterEach(async () => {
  // The processes first: they use the directories.
  await stopSpawnedProcesses();
  for (const dir of made.splice(0)) await rm(dir, { recursive: true, force: true, maxRetries: 3 });
});

/** A home directory of its own, and an environment with nothing of Molf's set. */
async function freshHome(): Promise<{ home: string; env: Record<string, string> }> {
  const home = await mkdtemp(join(tmpdir(), 'molf-home-cli-'));
  made.push(home);
  return { home, env: { HOME: home, MOLF_LOG_LEVEL: 'warn' } };
}

function molf(args: string[], env: Record<string, string>) {
  return spawnMolf(args, { env, extendEnv: false });
}

describe('where molf keeps its files', () => {
  it('on a fresh machine, molf server reads ~/.config/molf/config.jsonc, keeps its data in ~/.local/share/molf and logs in ~/.local/state/molf', async () => {
    const { home, env } = await freshHome();
    await mkdir(join(home, '.config', 'molf'), { recursive: true });
    await writeFile(join(home, '.config', 'molf', 'config.jsonc'), '{ "model": "fake/from-user-config" }\n');
    const server = molf(['server', '--port', '0'], env);
    const banner = await waitForOutput(server, 'default model');
    expect(banner).toContain(`data directory: ${join(home, '.local', 'share', 'molf')}\n`);
    expect(banner).toContain('default model: fake/from-user-config');
    expect(((await stat(join(home, '.local', 'share', 'molf', 'credentials.json'))).mode & 0o777).toString(8)).toBe(
      '600',
    );
    expect(existsSync(join(home, '.local', 'state', 'molf', 'logs', 'server.log'))).toBe(true);
    expect(existsSync(join(home, '.molf'))).toBe(false);
  });

  it('leaves an old ~/.molf in use while an older server runs from it, and moves it at the first start after that server stopped', async () => {
    const { home, env } = await freshHome();
    const legacy = join(home, '.molf');
    // As an older `molf up` started its server: the data dir named on its command line.
    const older = molf(['server', '--port', '0', '--data-dir', legacy], env);
    await waitForOutput(older, 'client token:');

    const during = await molf(['token', 'list'], env);
    expect(during.exitCode).toBe(0);
    expect(during.stderr).toMatch(
      /molf: ~\/\.molf is in use by pid \d+ \(molf\.js server --port 0 --data-dir ~\/\.molf\): this run uses it as before/,
    );
    expect(during.stdout).toMatch(/admin\s+generated at first start/);
    expect(existsSync(join(home, '.local', 'share', 'molf'))).toBe(false);

    await stopSpawnedProcesses();
    const after = await molf(['token', 'list'], env);
    expect(after.exitCode).toBe(0);
    expect(after.stderr).toContain(
      'molf: moved ~/.molf to ~/.config/molf, ~/.local/share/molf and ~/.local/state/molf (XDG)',
    );
    // The same credentials, now read from their new place.
    expect(after.stdout).toBe(during.stdout);
    const moved = join(home, '.local', 'share', 'molf', 'credentials.json');
    expect(((await stat(moved)).mode & 0o777).toString(8)).toBe('600');
    expect(await readlink(join(legacy, 'credentials.json'))).toBe(moved);
  });
});

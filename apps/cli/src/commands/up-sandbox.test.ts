import { accessSync, constants } from 'node:fs';
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { startFakeLlm } from '@molf/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { sandboxUnavailable, spawnMolf, stopSpawnedProcesses, waitForOutput } from '../testing/cli-test-kit.ts';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  // The processes first: the cleanups remove directories they use.
  await stopSpawnedProcesses();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * A temp directory outside /tmp (/var/tmp where writable, else ~/.cache/molf-test): inside the
 * sandbox /tmp is private, so secrets kept under /tmp would be out of sight whatever the policy.
 */
async function hostDir(prefix: string): Promise<string> {
  let base = '/var/tmp';
  try {
    accessSync(base, constants.W_OK);
  } catch {
    base = join(homedir(), '.cache', 'molf-test');
    await mkdir(base, { recursive: true });
  }
  const path = await realpath(await mkdtemp(join(base, prefix)));
  cleanups.push(() => rm(path, { recursive: true, force: true }));
  return path;
}

const unavailable = await sandboxUnavailable();
if (unavailable !== undefined) process.stderr.write(`SKIPPED molf up --sandbox test: ${unavailable}\n`);

describe.skipIf(unavailable !== undefined)('the stacks of molf up and molf run with --sandbox', () => {
  it('gives shell commands no way to find the client token: environments, command lines, client dir, data dir, HOME', async () => {
    const dataDir = await hostDir('molf-up-data-');
    const clientDir = await hostDir('molf-up-client-');
    const home = await hostDir('molf-up-home-');
    const project = await hostDir('molf-up-project-');
    await mkdir(join(home, '.molf'));

    let scan = '';
    const llm = await startFakeLlm({
      turns: [
        {
          toolCalls: [
            {
              name: 'shell_exec',
              arguments: {
                get command() {
                  return scan;
                },
              },
            },
          ],
        },
        { text: 'done' },
      ],
    });
    cleanups.push(() => llm.close());
    await writeFile(
      join(dataDir, 'config.jsonc'),
      JSON.stringify({ model: 'fake/m', providers: { fake: { baseURL: llm.baseURL } } }),
    );
    const env = {
      HOME: home,
      MOLF_CLIENT_DIR: clientDir,
      MOLF_LOG_FILE: 'none',
      MOLF_LOG_LEVEL: 'warn',
      PATH: process.env.PATH ?? '/usr/bin:/bin',
    };
    const up = spawnMolf(['up', '--port', '0', '--data-dir', dataDir, '--sandbox', 'required'], {
      cwd: project,
      env,
      extendEnv: false,
    });
    const shown = await waitForOutput(up, 'Ctrl-C stops everything');
    expect(shown).toContain('(sandbox: on)');
    const token = /client token: (\S+)/.exec(shown)?.[1] ?? '';
    const url = /server: +(ws:\/\/\S+)/.exec(shown)?.[1] ?? '';
    expect(token).toMatch(/^molf_c_/);

    // Where the token may be (~/.molf is hidden by default too), and a canary that proves the scan finds it.
    await writeFile(join(home, '.molf', 'connections.json'), token);
    await writeFile(join(project, 'canary.txt'), token);
    // The token and the paths are decoded inside the sandbox: the command line never holds the
    // token, and the gate (which refuses any tool a path into the data dir) is not what this tests.
    const encoded = Buffer.from(token).toString('base64');
    // So are the /proc files, which the default rules deny reading by name: what this tests is
    // what the sandbox lets an approved command reach.
    const places = Buffer.from(
      ['/proc/[0-9]*/environ', '/proc/[0-9]*/cmdline', clientDir, dataDir, home, project].join(' '),
    ).toString('base64');
    scan =
      `echo ${encoded} | base64 -d > /tmp/pattern; echo ${places} | base64 -d > /tmp/places; ` +
      'grep -rlsF -f /tmp/pattern $(cat /tmp/places); ' +
      'echo scan-done';

    const run = await spawnMolf(['run', '--server', url, '--on-ask', 'allow', 'find the token'], {
      cwd: project,
      env: { ...env, MOLF_CLIENT_TOKEN: token },
      extendEnv: false,
    });
    expect(run.exitCode).toBe(0);
    const toolMessage = llm.requests[1]?.messages.find((message) => message.role === 'tool');
    const found = String(toolMessage?.content)
      .split('\n')
      .filter((line) => line !== '' && !line.startsWith('exit code'));
    expect(found).toEqual([join(project, 'canary.txt'), 'scan-done']);
  });

  it('molf run --sandbox runs the commands of its embedded worker in the sandbox', async () => {
    const dataDir = await hostDir('molf-run-data-');
    const project = await hostDir('molf-run-project-');
    const llm = await startFakeLlm({
      turns: [
        { toolCalls: [{ name: 'shell_exec', arguments: { command: 'cat /proc/1/comm; touch /usr/molf-escape' } }] },
        { text: 'done' },
      ],
    });
    cleanups.push(() => llm.close());
    await writeFile(
      join(dataDir, 'config.jsonc'),
      JSON.stringify({ model: 'fake/m', providers: { fake: { baseURL: llm.baseURL } } }),
    );
    const run = await spawnMolf(['run', 'try it', '--sandbox', 'required', '--on-ask', 'allow'], {
      cwd: project,
      env: {
        MOLF_HOME: dataDir,
        MOLF_CLIENT_DIR: dataDir,
        MOLF_LOG_FILE: 'none',
        PATH: process.env.PATH ?? '/usr/bin:/bin',
      },
      extendEnv: false,
    });
    expect(run.exitCode).toBe(0);
    const toolMessage = String(llm.requests[1]?.messages.find((message) => message.role === 'tool')?.content);
    // PID 1 of the command's namespace is bwrap, and the write outside the workdir is refused.
    expect(toolMessage).toMatch(/^bwrap$/m);
    expect(toolMessage).toContain('Read-only file system');
    expect(toolMessage).toContain('The sandbox refused a write');
  });
});

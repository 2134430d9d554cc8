import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { LogLevel } from '@molf/logging';
import { loadProjectConfigFile, projectConfigPath } from '@molf/server';
import { validateWorkdir } from '@molf/worker';
import { type Command, Option } from 'commander';
import { dataDirOption, logLevelOption, portOption } from '../cli-options.ts';
import { currentMolfPaths } from '../current-molf-paths.ts';
import { addSandboxOptions, type SandboxFlags, toSandboxArguments, toSandboxConfig } from '../sandbox-options.ts';
import { SUPERVISED_ENV } from '../shutdown-signals.ts';
import { UP_PLAN_ENV, type UpPlan } from '../up-supervisor/up-plan.ts';

type UpOptions = { port: number; dataDir?: string; name?: string; logLevel: LogLevel } & SandboxFlags;

/**
 * The supervisor as scripts/build-cli.ts bundles it. `import.meta.url` is this source file's URL in
 * the bundle too, so the path is the same either way.
 */
const SUPERVISOR_BUNDLE = fileURLToPath(new URL('../../dist/up-supervisor.cjs', import.meta.url));

/**
 * `true` in the bundle (scripts/build-cli.ts defines it), undeclared when the sources run: bin/molf.js
 * chose the bundle only while it was fresh, so the supervisor built with it is fresh too.
 */
declare const __MOLF_BUNDLE__: boolean | undefined;
const runningTheBundle = typeof __MOLF_BUNDLE__ !== 'undefined';

export function registerUpCommand(program: Command): void {
  const command = program
    .command('up')
    .description(
      'start a server on loopback and a worker on the current directory, with fresh tokens; ' +
        'saves the connection so `molf` client commands run here need no flags',
    )
    .addOption(portOption())
    .addOption(dataDirOption())
    .addOption(new Option('--name <name>', 'worker label (default: the directory name)'))
    .addOption(logLevelOption());
  addSandboxOptions(command).action(runUp);
}

/** What the supervisor needs, from the flags: no token (see {@link UpPlan}). */
async function planUp(options: UpOptions): Promise<UpPlan> {
  const projectDir = await validateWorkdir(process.cwd());
  const paths = currentMolfPaths(options);
  // The project's .molf/config.jsonc is the server's to apply; read here first so that a broken one
  // is said before anything starts.
  const projectConfig = projectConfigPath(projectDir);
  await loadProjectConfigFile(projectConfig);
  return {
    projectDir,
    // The script this process was started with (bin/molf.js or src/main.ts): the children run the
    // same build of the CLI as their supervisor.
    cliMain: process.argv[1] as string,
    // Under `node --watch` (pnpm dev) the children must not become watchers themselves.
    nodeOptions: process.execArgv.filter((option) => !option.startsWith('--watch')),
    // Only a data dir given here is passed on: the server finds the default places itself (one
    // `--data-dir` would make it keep its config and logs in that directory too).
    serverArgs: [
      'server',
      '--host',
      '127.0.0.1',
      '--port',
      String(options.port),
      '--project-config',
      projectConfig,
      ...(options.dataDir === undefined ? [] : ['--data-dir', options.dataDir]),
    ],
    workerArgs: [
      'worker',
      '--workdir',
      projectDir,
      ...(options.name === undefined ? [] : ['--name', options.name]),
      // The server's data and the saved client token are Molf's own: sandboxed commands never see them.
      ...toSandboxArguments(toSandboxConfig(options, { hide: [paths.dataDir, paths.clientDir] })),
    ],
    env: { MOLF_LOG_LEVEL: options.logLevel, [SUPERVISED_ENV]: '1' },
  };
}

/**
 * Checks the flags, then becomes the supervisor: this process is replaced (same pid, so a terminal's
 * Ctrl-C and a service manager's signals still reach it) by the bundled supervisor, which loads only
 * Node's built-ins and so holds a fraction of what this one does for as long as Molf is up. Where
 * that cannot be (running from the sources, or a platform without `execve`), it supervises from here.
 */
async function runUp(options: UpOptions): Promise<void> {
  const plan = await planUp(options);
  if (typeof process.execve === 'function' && runningTheBundle && existsSync(SUPERVISOR_BUNDLE)) {
    // V8's lite mode: no optimising compilers, whose code and working memory a process that only
    // waits for signals never needs (2.5 MiB less).
    process.execve(process.execPath, [process.execPath, '--lite-mode', SUPERVISOR_BUNDLE], {
      ...process.env,
      [UP_PLAN_ENV]: JSON.stringify(plan),
    });
  }
  const { superviseUp } = await import('../up-supervisor/supervise-up.ts');
  await superviseUp(plan);
}

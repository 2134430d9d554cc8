import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { closeLogger, createLogger, type LogLevel } from '@molf/logging';
import { MolfError } from '@molf/protocol';
import { createWorker, defaultHiddenPaths, describeSandbox, loadWorkerConfigFile, validateWorkdir } from '@molf/worker';
import { type Command, Option } from 'commander';
import { logLevelOption, serverUrlOption } from '../cli-options.ts';
import { finishStartup } from '../finish-startup.ts';
import type { TokenFile } from '../read-token-file.ts';
import { resolveTokenOption } from '../resolve-token-option.ts';
import { addSandboxOptions, type SandboxFlags, toSandboxConfig } from '../sandbox-options.ts';
import { notifyParent, onShutdownSignal } from '../shutdown-signals.ts';
import { receiveTokensFromParent } from '../token-handover.ts';

type WorkerOptions = {
  server?: string;
  token?: string;
  tokenFile?: string;
  workdir: string;
  name?: string;
  requireReadBeforeWrite?: boolean;
  config?: string;
  logLevel: LogLevel;
} & SandboxFlags;

export function registerWorkerCommand(program: Command): void {
  const command = program
    .command('worker')
    .description('run a worker daemon that executes tools in one project directory')
    .addOption(serverUrlOption().default('ws://127.0.0.1:7600'))
    .addOption(
      new Option(
        '--token <token>',
        'worker token (visible to other processes in ps and /proc: prefer --token-file)',
      ).env('MOLF_WORKER_TOKEN'),
    )
    .addOption(
      new Option('--token-file <path>', 'file holding the worker token, read at start (mode 0600)').env(
        'MOLF_WORKER_TOKEN_FILE',
      ),
    )
    .addOption(
      new Option('--workdir <dir>', 'project directory the tools run in').default(process.cwd(), 'current directory'),
    )
    .addOption(new Option('--name <name>', 'label shown to clients (default: the workdir name)'))
    .option('--require-read-before-write', 'refuse write_file/edit_file on an existing file the session has not read')
    .addOption(
      new Option('--config <file>', 'worker config file (JSONC, outside the workdir): the sandbox settings').env(
        'MOLF_WORKER_CONFIG',
      ),
    )
    .addOption(logLevelOption());
  addSandboxOptions(command).action(runWorker);
}

async function runWorker(options: WorkerOptions): Promise<void> {
  // Molf's own directories, hidden from sandboxed commands: read before anything scrubs the environment.
  const molfDirectories = defaultHiddenPaths({ env: process.env, home: homedir() });
  const handed = await receiveTokensFromParent();
  const given: TokenFile | undefined =
    handed === undefined
      ? await resolveTokenOption({ value: options.token, file: options.tokenFile, flags: ['--token', '--token-file'] })
      : handed.worker === undefined
        ? undefined
        : { token: handed.worker };
  const token = given?.token;
  if (token === undefined) {
    throw new MolfError(
      'unauthorized',
      'no worker token: pass --token-file (or MOLF_WORKER_TOKEN_FILE), or --token (or MOLF_WORKER_TOKEN)',
    );
  }
  // Tools run commands in this process's environment; the credential must not be in it. (This
  // does not change /proc/<pid>/environ, which keeps what the process started with.)
  delete process.env.MOLF_WORKER_TOKEN;
  delete process.env.MOLF_CLIENT_TOKEN;

  const workdir = await validateWorkdir(options.workdir);
  const logger = await createLogger({
    name: 'worker',
    level: options.logLevel,
    ...(process.env.MOLF_LOG_FILE === 'none' ? {} : { filePath: join(workdir, '.molf', 'logs', 'worker.log') }),
  });
  if (given?.warning !== undefined) logger.warn(given.warning);
  const serverUrl = options.server ?? 'ws://127.0.0.1:7600';
  const tokenFile = handed === undefined && options.tokenFile ? resolve(options.tokenFile) : undefined;
  const file = options.config === undefined ? {} : await loadWorkerConfigFile(options.config, { workdir });
  const worker = await createWorker({
    serverUrl,
    token,
    workdir,
    // The sandbox, when on, hides the token file from commands as it hides Molf's own directories.
    sandbox: toSandboxConfig(options, {
      file: file.sandbox,
      hide: [...molfDirectories, ...(tokenFile === undefined ? [] : [tokenFile])],
    }),
    ...(options.name === undefined ? {} : { name: options.name }),
    requireReadBeforeWrite: options.requireReadBeforeWrite === true,
    logger,
  });
  onShutdownSignal(async () => {
    await worker.close();
    await closeLogger(logger);
  });
  logger.info({ workerId: worker.workerId, serverUrl }, 'worker started; connecting');
  try {
    await worker.registered;
  } catch (error) {
    await worker.close();
    throw error;
  }
  const sandbox = describeSandbox(worker.sandbox);
  process.stdout.write(
    `molf worker "${worker.name}" (${worker.workerId}) serving ${workdir} via ${serverUrl} (sandbox: ${sandbox})\n`,
  );
  notifyParent({ type: 'ready', workerId: worker.workerId, name: worker.name, sandbox });
  finishStartup();
  // Resolves on a signal-driven close (the signal handler exits); rejects when the worker stops
  // by itself, e.g. replaced by another process: main reports it and exits non-zero.
  await worker.stopped;
}

import { join } from 'node:path';
import { createLogger, type LogLevel } from '@molf/logging';
import { MolfError } from '@molf/protocol';
import { createWorker, validateWorkdir } from '@molf/worker';
import { type Command, Option } from 'commander';
import { logLevelOption, serverUrlOption } from '../cli-options.ts';
import { notifyParent, onShutdownSignal } from '../shutdown-signals.ts';

type WorkerOptions = {
  server?: string;
  token?: string;
  workdir: string;
  name?: string;
  requireReadBeforeWrite?: boolean;
  logLevel: LogLevel;
};

export function registerWorkerCommand(program: Command): void {
  program
    .command('worker')
    .description('run a worker daemon that executes tools in one project directory')
    .addOption(serverUrlOption().default('ws://127.0.0.1:7600'))
    .addOption(new Option('--token <token>', 'worker token').env('MOLF_WORKER_TOKEN'))
    .addOption(
      new Option('--workdir <dir>', 'project directory the tools run in').default(process.cwd(), 'current directory'),
    )
    .addOption(new Option('--name <name>', 'label shown to clients (default: the workdir name)'))
    .option('--require-read-before-write', 'refuse write_file/edit_file on an existing file the session has not read')
    .addOption(logLevelOption())
    .action(runWorker);
}

async function runWorker(options: WorkerOptions): Promise<void> {
  if (options.token === undefined || options.token === '') {
    throw new MolfError('unauthorized', 'no worker token: pass --token or set MOLF_WORKER_TOKEN');
  }
  // Tools run commands in this process's environment; the credential must not be in it.
  delete process.env.MOLF_WORKER_TOKEN;
  delete process.env.MOLF_CLIENT_TOKEN;

  const workdir = await validateWorkdir(options.workdir);
  const logger = await createLogger({
    name: 'worker',
    level: options.logLevel,
    ...(process.env.MOLF_LOG_FILE === 'none' ? {} : { filePath: join(workdir, '.molf', 'logs', 'worker.log') }),
  });
  const serverUrl = options.server ?? 'ws://127.0.0.1:7600';
  const worker = await createWorker({
    serverUrl,
    token: options.token,
    workdir,
    ...(options.name === undefined ? {} : { name: options.name }),
    requireReadBeforeWrite: options.requireReadBeforeWrite === true,
    logger,
  });
  onShutdownSignal(async () => {
    await worker.close();
    logger.flush();
  });
  logger.info({ workerId: worker.workerId, serverUrl }, 'worker started; connecting');
  try {
    await worker.registered;
  } catch (error) {
    await worker.close();
    throw error;
  }
  process.stdout.write(`molf worker "${worker.name}" (${worker.workerId}) serving ${workdir} via ${serverUrl}\n`);
  notifyParent({ type: 'ready', workerId: worker.workerId, name: worker.name });
  // Resolves on a signal-driven close (the signal handler exits); rejects when the worker stops
  // by itself, e.g. replaced by another process: main reports it and exits non-zero.
  await worker.stopped;
}

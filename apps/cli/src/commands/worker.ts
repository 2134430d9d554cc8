import { homedir, hostname } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { redeemPairingCode, type ServerTrust } from '@molf/client/node';
import { closeLogger, createLogger, type LogLevel } from '@molf/logging';
import { MolfError } from '@molf/protocol';
import { createWorker, defaultHiddenPaths, describeSandbox, loadWorkerConfigFile, validateWorkdir } from '@molf/worker';
import { type Command, Option } from 'commander';
import { logLevelOption, serverUrlOption } from '../cli-options.ts';
import { toCredentialName } from '../credentials/to-credential-name.ts';
import { finishStartup } from '../finish-startup.ts';
import type { TokenFile } from '../read-token-file.ts';
import {
  addServerTrustOptions,
  type ServerTrustFlags,
  verifyServerForCommand,
} from '../remote/server-trust-options.ts';
import { workerCredentials } from '../remote/worker-credentials.ts';
import { resolveTokenOption } from '../resolve-token-option.ts';
import { addSandboxOptions, type SandboxFlags, toSandboxConfig } from '../sandbox-options.ts';
import { notifyParent, onShutdownSignal } from '../shutdown-signals.ts';
import { showOnOneLine } from '../terminal/show-on-one-line.ts';
import { receiveTokensFromParent } from '../token-handover.ts';

type WorkerOptions = {
  server?: string;
  token?: string;
  tokenFile?: string;
  pair?: string;
  workdir: string;
  name?: string;
  requireReadBeforeWrite?: boolean;
  config?: string;
  logLevel: LogLevel;
} & SandboxFlags &
  ServerTrustFlags;

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
    .addOption(
      new Option(
        '--pair <code>',
        'a pairing code from `molf pair --role worker` on the server: traded for a worker token saved 0600 on this machine',
      ),
    )
    .addOption(new Option('--name <name>', 'label shown to clients (default: the workdir name)'))
    .option('--require-read-before-write', 'refuse write_file/edit_file on an existing file the session has not read')
    .addOption(
      new Option('--config <file>', 'worker config file (JSONC, outside the workdir): the sandbox settings').env(
        'MOLF_WORKER_CONFIG',
      ),
    )
    .addOption(logLevelOption());
  addSandboxOptions(addServerTrustOptions(command)).action(runWorker);
}

async function runWorker(options: WorkerOptions): Promise<void> {
  // Molf's own directories, hidden from sandboxed commands: read before anything scrubs the environment.
  const molfDirectories = defaultHiddenPaths({ env: process.env, home: homedir() });
  const handed = await receiveTokensFromParent();
  const serverUrl = options.server ?? 'ws://127.0.0.1:7600';
  const workdir = await validateWorkdir(options.workdir);
  // A server on another machine is verified before anything is sent to it, the token included.
  const trust =
    handed === undefined ? await verifyServerForCommand(serverUrl, options, { program: 'molf worker' }) : undefined;
  const given: TokenFile | undefined =
    handed === undefined
      ? await workerToken(options, { serverUrl, workdir, trust })
      : handed.worker === undefined
        ? undefined
        : { token: handed.worker };
  const token = given?.token;
  if (token === undefined) {
    throw new MolfError(
      'unauthorized',
      `no worker token for ${serverUrl} and ${workdir}: pair this worker (\`molf pair --role worker\` on the server, ` +
        'then --pair CODE here), or pass --token-file (or MOLF_WORKER_TOKEN_FILE), or --token (or MOLF_WORKER_TOKEN)',
    );
  }
  // Tools run commands in this process's environment; the credential must not be in it. (This
  // does not change /proc/<pid>/environ, which keeps what the process started with.)
  delete process.env.MOLF_WORKER_TOKEN;
  delete process.env.MOLF_CLIENT_TOKEN;

  const logger = await createLogger({
    name: 'worker',
    level: options.logLevel,
    ...(process.env.MOLF_LOG_FILE === 'none' ? {} : { filePath: join(workdir, '.molf', 'logs', 'worker.log') }),
  });
  if (given?.warning !== undefined) logger.warn(given.warning);
  const tokenFile = handed === undefined && options.tokenFile ? resolve(options.tokenFile) : undefined;
  const file = options.config === undefined ? {} : await loadWorkerConfigFile(options.config, { workdir });
  const worker = await createWorker({
    serverUrl,
    token,
    ...(trust === undefined ? {} : { trust }),
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

/**
 * The worker's token when it was not handed over by `molf up`: a pairing code traded for one (and
 * saved for the next start), a flag or file, or the one saved when this worker was paired.
 */
async function workerToken(
  options: WorkerOptions,
  link: { serverUrl: string; workdir: string; trust: ServerTrust | undefined },
): Promise<TokenFile | undefined> {
  const given = await resolveTokenOption({
    value: options.token,
    file: options.tokenFile,
    flags: ['--token', '--token-file'],
  });
  const saved = workerCredentials();
  if (options.pair !== undefined) {
    if (given !== undefined) {
      throw new MolfError('config_invalid', 'give --pair or a token (--token, --token-file), not both');
    }
    const credential = await redeemPairingCode({
      url: link.serverUrl,
      code: options.pair,
      kind: 'worker',
      name: toCredentialName(options.name ?? `${basename(link.workdir)}@${hostname()}`, `worker@${hostname()}`),
      ...(link.trust === undefined ? {} : { trust: link.trust }),
    });
    await saved.save(link.serverUrl, link.workdir, {
      token: credential.token,
      name: credential.name,
      credentialId: credential.credentialId,
      savedAt: new Date().toISOString(),
    });
    process.stderr.write(
      `molf worker: paired as "${showOnOneLine(credential.name)}" (credential ${credential.credentialId}); the token is saved in ${saved.path}\n`,
    );
    return { token: credential.token };
  }
  if (given !== undefined) return given;
  const stored = await saved.get(link.serverUrl, link.workdir);
  return stored === undefined ? undefined : { token: stored.token };
}

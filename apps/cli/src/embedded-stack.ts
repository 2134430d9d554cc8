import { join } from 'node:path';
import { createMolfClient, type MolfClient } from '@molf/client/node';
import { createLogger, isLogLevel } from '@molf/logging';
import { MolfError, type Role, type WorkerId, type WorkerInfo } from '@molf/protocol';
import {
  createServer,
  generateToken,
  loadProjectConfigFile,
  loadServerConfigFile,
  projectConfigPath,
  toCronSettings,
  toModelSettings,
  withProjectConfig,
} from '@molf/server';
import { createWorker, describeSandbox, validateWorkdir } from '@molf/worker';
import { type Command, Option } from 'commander';
import { dataDirOption, serverUrlOption } from './cli-options.ts';
import { CLI_CLIENT_NAME } from './cli-version.ts';
import { type ConnectedClient, connectClient, type LinkTeller } from './connect-client.ts';
import { findConnection } from './connection-store.ts';
import { currentMolfPaths } from './current-molf-paths.ts';
import { resolveClientConnection } from './resolve-client-connection.ts';
import { addSandboxOptions, type SandboxFlags, toSandboxConfig } from './sandbox-options.ts';

/** A client, and the worker new sessions run on when it is known. */
export type Stack = AsyncDisposable & {
  client: MolfClient;
  /** The role of the client's credential, as the server told it (the embedded stack's own token is an admin). */
  role: Role;
  workerId: string | undefined;
  /** Whether the worker is this command's own (embedded), so it answers the worker's own questions too. */
  ownWorker: boolean;
  /** Settles if the server refuses the token after connecting (the client has stopped); never otherwise. */
  refused: Promise<MolfError>;
};

/** The flags of commands that run their own stack or use a server (`molf run`, `molf chat`). */
export function addStackOptions(command: Command): Command {
  // The embedded worker's sandbox (with --server, the server's workers have their own).
  addSandboxOptions(command, { paths: false });
  return command
    .addOption(serverUrlOption())
    .addOption(new Option('--token <token>', 'client token (with --server)').env('MOLF_CLIENT_TOKEN'))
    .option('--worker <id>', 'with --server: the worker new sessions run on (default: the only one online)')
    .addOption(dataDirOption())
    .addOption(new Option('--config <file>', 'server config file for the embedded server').env('MOLF_CONFIG'));
}

/**
 * With `--server`, a client of that server. Without, the server of the live `molf up` for this
 * directory (its saved connection, if that server answers and accepts the token), else an
 * embedded stack of its own.
 */
export async function openStack(options: StackOptions): Promise<Stack> {
  if (options.server !== undefined) return connectToServer(options);
  return (await connectToLiveUp(process.cwd(), tellerFor(options))) ?? startEmbeddedStack(options);
}

/** Where the lines about the link go: stderr, or nowhere with `quiet`. */
function tellerFor(options: { quiet?: boolean | undefined; onLinkChange?: LinkTeller | undefined }): LinkTeller {
  return options.quiet === true ? () => {} : (options.onLinkChange ?? tellLink);
}

/** Lines about the link for the person at the terminal; stdout carries the answer. */
function tellLink(line: string): void {
  process.stderr.write(`molf: ${line}\n`);
}

/**
 * A client of the server `molf up` saved for `cwd` (or an ancestor), if it is live: it answers
 * and accepts the saved token. A record left by a `molf up` that is gone is not used.
 */
async function connectToLiveUp(cwd: string, tell: LinkTeller): Promise<Stack | undefined> {
  const saved = await findConnection(cwd);
  if (saved === undefined) return undefined;
  const refused = Promise.withResolvers<MolfError>();
  let client: ConnectedClient;
  try {
    client = await connectClient({
      url: saved.url,
      token: saved.token,
      failFast: true,
      onLinkChange: tell,
      onRefused: refused.resolve,
    });
  } catch {
    return undefined;
  }
  tell(`using the server of \`molf up\` at ${saved.url} for ${saved.projectDir} (saved in ${saved.file})`, 'note');
  let own: WorkerInfo | undefined;
  try {
    // Its worker is the one on the project directory, if it is online.
    const workers = await client.rpc.workers.list.query();
    own = workers.find((worker) => worker.state === 'online' && worker.workdir === saved.projectDir);
  } catch (error) {
    await client.close();
    throw error;
  }
  return {
    client,
    role: client.whoami.role,
    workerId: own?.workerId,
    ownWorker: false,
    refused: refused.promise,
    [Symbol.asyncDispose]: () => client.close(),
  };
}

/** The worker new sessions run on: the stack's own, else the only one online. */
export async function sessionWorker(stack: Stack): Promise<WorkerId> {
  if (stack.workerId !== undefined) return stack.workerId as WorkerId;
  const online = (await stack.client.rpc.workers.list.query()).filter((worker) => worker.state === 'online');
  const [only] = online;
  if (online.length !== 1 || only === undefined) {
    throw new MolfError('worker_not_found', `${online.length} workers are online: pick one with --worker <id>`);
  }
  return only.workerId;
}

export type StackOptions = {
  model?: string | undefined;
  dataDir?: string | undefined;
  config?: string | undefined;
  server?: string | undefined;
  token?: string | undefined;
  worker?: string | undefined;
  /** Log file name under the logs dir (`$XDG_STATE_HOME/molf/logs`, or `{dataDir}/logs` with one given). */
  logName: string;
  /**
   * Say nothing about the link on stderr (`molf run --quiet`): a token refused later still settles
   * `refused`, for the command to tell. Default false.
   */
  quiet?: boolean | undefined;
  /** Where the lines about the link go instead of stderr (`molf chat` shows them in its status line). */
  onLinkChange?: LinkTeller | undefined;
} & SandboxFlags;

/** A server on loopback port 0 and a worker on the current directory, in this process. */
export async function startEmbeddedStack(options: StackOptions): Promise<Stack> {
  const paths = currentMolfPaths(options);
  const { dataDir } = paths;
  const workdir = await validateWorkdir(process.cwd());
  const user = await loadServerConfigFile(options.config ?? paths.configFile, {
    optional: options.config === undefined,
  });
  // This directory's .molf/config.jsonc: the embedded server is this project's (flag > env > project > user).
  const file = withProjectConfig(user, await loadProjectConfigFile(projectConfigPath(workdir)));
  const { models, agent } = toModelSettings(file, { model: options.model });
  const level = process.env.MOLF_LOG_LEVEL;
  const logger = await createLogger({
    name: options.logName,
    level: level !== undefined && isLogLevel(level) ? level : 'warn',
    // stdout carries the answer; logs go to the file only.
    console: 'none',
    ...(process.env.MOLF_LOG_FILE === 'none' ? {} : { filePath: join(paths.logsDir, `${options.logName}.log`) }),
  });
  const tokens = { client: generateToken('client'), worker: generateToken('worker') };
  const server = await createServer({
    port: 0,
    dataDir,
    tokens,
    models,
    agent,
    ...(file.notify === undefined ? {} : { notify: file.notify }),
    cron: toCronSettings(file),
    logger,
  });
  try {
    const worker = await createWorker({
      serverUrl: server.url,
      token: tokens.worker,
      workdir,
      // The data dir (credentials, sessions) and the saved client tokens stay out of commands' sight.
      sandbox: toSandboxConfig(options, { hide: [dataDir, paths.clientDir] }),
      logger,
    });
    if (worker.sandbox.mode !== 'off' && !worker.sandbox.active) {
      // The log goes to a file only here: the person must see that commands run unsandboxed.
      process.stderr.write(`molf: sandbox ${describeSandbox(worker.sandbox)}; commands run WITHOUT the sandbox\n`);
    }
    await worker.registered;
    const client = createMolfClient({ url: server.url, token: tokens.client, client: CLI_CLIENT_NAME });
    const { role } = await client.ready();
    return {
      client,
      role,
      workerId: worker.workerId,
      ownWorker: true,
      // Our own server knows our token for as long as we run.
      refused: new Promise<MolfError>(() => {}),
      async [Symbol.asyncDispose]() {
        try {
          await client.close();
          await worker.close();
        } finally {
          await server.close();
        }
      },
    };
  } catch (error) {
    await server.close();
    throw error;
  }
}

export async function connectToServer(options: StackOptions): Promise<Stack> {
  const refused = Promise.withResolvers<MolfError>();
  const client = await connectClient({
    ...(await resolveClientConnection(options)),
    onLinkChange: tellerFor(options),
    onRefused: refused.resolve,
  });
  return {
    client,
    role: client.whoami.role,
    workerId: options.worker,
    ownWorker: false,
    refused: refused.promise,
    [Symbol.asyncDispose]: () => client.close(),
  };
}

import type { LogLevel } from '@molf/logging';
import { MolfError } from '@molf/protocol';
import { defaultDataDir, generateToken } from '@molf/server';
import { validateWorkdir } from '@molf/worker';
import { type Command, Option } from 'commander';
import { execaNode, type ResultPromise } from 'execa';
import { dataDirOption, logLevelOption, portOption } from '../cli-options.ts';
import { clientDir, loadConnection, saveConnection } from '../connection-store.ts';
import { addSandboxOptions, type SandboxFlags, toSandboxArguments, toSandboxConfig } from '../sandbox-options.ts';
import { onShutdownSignal, SUPERVISED_ENV } from '../shutdown-signals.ts';
import { type HandedTokens, handTokensToChild, TOKENS_FROM_PARENT_ENV } from '../token-handover.ts';

type UpOptions = { port: number; dataDir?: string; name?: string; logLevel: LogLevel } & SandboxFlags;

/**
 * The script this process was started with (bin/molf.js, the bundle's main.js or src/main.ts): the
 * children run the same build of the CLI as their supervisor.
 */
const CLI_MAIN = process.argv[1] as string;
/** How long a child gets to stop after SIGTERM before it is killed. */
const STOP_GRACE_MS = 5_000;

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

type Child = ResultPromise<{ ipc: true }>;

/**
 * Token variables of `up`'s own environment: a child would take them for its own (a client token
 * the user keeps for `molf workers`, say) instead of the ones handed over.
 */
const TOKEN_ENV = ['MOLF_CLIENT_TOKEN', 'MOLF_WORKER_TOKEN', 'MOLF_CLIENT_TOKEN_FILE', 'MOLF_WORKER_TOKEN_FILE'];

/**
 * Starts `molf <args>` and hands it `tokens` over the IPC channel when it asks. Never in its
 * environment or arguments: those are readable by every process of the same user
 * (`/proc/<pid>/environ`, `ps`), the worker's shell commands included.
 */
function startChild(args: string[], options: { env: Record<string, string>; tokens: HandedTokens }): Child {
  const env: NodeJS.ProcessEnv = { ...process.env, ...options.env, [TOKENS_FROM_PARENT_ENV]: '1' };
  for (const name of TOKEN_ENV) delete env[name];
  const child = execaNode(CLI_MAIN, args, {
    // Under `node --watch` (pnpm dev) the children must not become watchers themselves.
    nodeOptions: process.execArgv.filter((option) => !option.startsWith('--watch')),
    ipc: true,
    env,
    extendEnv: false,
    stdin: 'ignore',
    stdout: 'inherit',
    stderr: 'inherit',
    reject: false,
    forceKillAfterDelay: STOP_GRACE_MS,
    cleanup: true,
  }) as unknown as Child;
  handTokensToChild(child, options.tokens);
  return child;
}

/** Resolves with the child's ready message, or fails saying so if the child exits first. */
async function waitReady(child: Child, what: string): Promise<Record<string, unknown>> {
  try {
    return (await child.getOneMessage({
      filter: (message) => (message as { type?: unknown } | undefined)?.type === 'ready',
    })) as Record<string, unknown>;
  } catch {
    const result = await child;
    throw new MolfError(
      'internal',
      `${what} stopped before it was ready (exit ${result.exitCode ?? result.signal}); its error is printed above`,
    );
  }
}

async function runUp(options: UpOptions): Promise<void> {
  const projectDir = await validateWorkdir(process.cwd());
  const dataDir = options.dataDir ?? defaultDataDir();
  // The client token of the last `molf up` here, kept (0600, beside the connection it opens) so
  // that chats left open across a restart reconnect; the worker token is new each time: only
  // this process hands it out.
  const clientToken = (await loadConnection(projectDir))?.token ?? generateToken('client');
  const workerToken = generateToken('worker');
  const children: Child[] = [];
  let stopping = false;

  const stopAll = async () => {
    stopping = true;
    // Stop the worker first so it doesn't spin reconnecting to a server that is going away.
    for (const child of [...children].reverse()) {
      child.kill('SIGTERM');
      await child;
    }
  };
  onShutdownSignal(stopAll, {
    // A second Ctrl-C: don't leave children behind.
    onForce: () => {
      for (const child of children) child.kill('SIGKILL');
    },
  });

  const baseEnv = { MOLF_LOG_LEVEL: options.logLevel, [SUPERVISED_ENV]: '1' };
  const server = startChild(['server', '--host', '127.0.0.1', '--port', String(options.port), '--data-dir', dataDir], {
    env: baseEnv,
    tokens: { client: clientToken, worker: workerToken },
  });
  children.push(server);
  let ready: Record<string, unknown>;
  try {
    ready = await waitReady(server, 'the server');
  } catch (error) {
    await stopAll();
    throw error;
  }
  const url = String(ready.url);
  const httpUrl = String(ready.httpUrl);

  const worker = startChild(
    [
      'worker',
      '--server',
      url,
      '--workdir',
      projectDir,
      ...(options.name === undefined ? [] : ['--name', options.name]),
      // The server's data and the saved client token are Molf's own: sandboxed commands never see them.
      ...toSandboxArguments(toSandboxConfig(options, { hide: [dataDir, clientDir()] })),
    ],
    // The worker needs only its own token: the client token stays out of its process entirely.
    { env: baseEnv, tokens: { worker: workerToken } },
  );
  children.push(worker);
  let workerReady: Record<string, unknown>;
  try {
    // The worker retries forever while the server is away, so the server dying now must end the wait.
    workerReady = await Promise.race([
      waitReady(worker, 'the worker'),
      server.then((result) => {
        throw new MolfError(
          'internal',
          `the server stopped while the worker was starting (exit ${result.exitCode ?? result.signal})`,
        );
      }),
    ]);
  } catch (error) {
    await stopAll();
    throw error;
  }

  const savedTo = await saveConnection({ projectDir, url, token: clientToken });
  process.stdout.write(
    [
      '',
      'Molf is up.',
      `  server:  ${url}   (health: ${httpUrl}/healthz)`,
      `  worker:  ${String(workerReady.name)} on ${projectDir} (sandbox: ${String(workerReady.sandbox)})`,
      `  client token: ${clientToken}`,
      `  saved to ${savedTo}: \`molf workers\` and other client commands run here need no flags.`,
      '  Ctrl-C stops everything.',
      '',
    ].join('\n'),
  );

  for (const [child, what] of [
    [server, 'server'],
    [worker, 'worker'],
  ] as const) {
    void child.then(async (result) => {
      if (stopping) return;
      process.stderr.write(
        `molf up: the ${what} stopped unexpectedly (exit ${result.exitCode ?? result.signal}); stopping\n`,
      );
      await stopAll();
      process.exit(1);
    });
  }
}

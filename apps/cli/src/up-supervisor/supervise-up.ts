import { type ChildProcess, fork } from 'node:child_process';
import { loadConnection, saveConnection } from '../connection-store.ts';
import { onShutdownSignal } from '../shutdown-signals.ts';
import { type HandedTokens, handTokensToChild, TOKENS_FROM_PARENT_ENV } from '../token-handover.ts';
import { webLoginUrl } from '../web-login-url.ts';
import { newToken } from './new-token.ts';
import type { UpPlan } from './up-plan.ts';

/** How long a child gets to stop after SIGTERM before it is killed. */
const STOP_GRACE_MS = 5_000;

/**
 * Token variables of `up`'s own environment: a child would take them for its own (a client token
 * the user keeps for `molf workers`, say) instead of the ones handed over.
 */
const TOKEN_ENV = ['MOLF_CLIENT_TOKEN', 'MOLF_WORKER_TOKEN', 'MOLF_CLIENT_TOKEN_FILE', 'MOLF_WORKER_TOKEN_FILE'];

type Exit = { code: number | null; signal: NodeJS.Signals | null };

/** A child `molf` process and the promise of its exit. */
type Child = { process: ChildProcess; exited: Promise<Exit> };

function describeExit(exit: Exit): string {
  return `exit ${exit.code ?? exit.signal}`;
}

/**
 * Starts `molf <args>` and hands it `tokens` over the IPC channel when it asks. Never in its
 * environment or arguments: those are readable by every process of the same user
 * (`/proc/<pid>/environ`, `ps`), the worker's shell commands included.
 */
function startChild(plan: UpPlan, args: string[], tokens: HandedTokens): Child {
  const env: NodeJS.ProcessEnv = { ...process.env, ...plan.env, [TOKENS_FROM_PARENT_ENV]: '1' };
  for (const name of TOKEN_ENV) delete env[name];
  const child = fork(plan.cliMain, args, {
    execArgv: plan.nodeOptions,
    env,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const exited = new Promise<Exit>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
    // A child that could not be started at all (no pid) ends with this error instead of an exit. A
    // later error (a signal it could not get) changes nothing, but must not go unhandled and end the
    // supervisor.
    child.on('error', () => {
      if (child.pid === undefined) resolve({ code: 1, signal: null });
    });
  });
  handTokensToChild(child, tokens);
  return { process: child, exited };
}

/** Resolves with the child's ready message, or fails saying so if the child exits first. */
function waitReady(child: Child, what: string): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: unknown) => {
      if ((message as { type?: unknown } | undefined)?.type !== 'ready') return;
      child.process.off('message', onMessage);
      resolve(message as Record<string, unknown>);
    };
    child.process.on('message', onMessage);
    void child.exited.then((exit) => {
      child.process.off('message', onMessage);
      reject(new Error(`${what} stopped before it was ready (${describeExit(exit)}); its error is printed above`));
    });
  });
}

/** SIGTERM, then SIGKILL after the grace period; resolves once the child is gone. */
async function stopChild(child: Child): Promise<void> {
  if (child.process.exitCode !== null || child.process.signalCode !== null) return;
  child.process.kill('SIGTERM');
  const killer = setTimeout(() => child.process.kill('SIGKILL'), STOP_GRACE_MS);
  await child.exited;
  clearTimeout(killer);
}

/**
 * The `molf up` supervisor: starts the server, then the worker on the project, saves the connection
 * for client commands run there, and stops both, worker first, on Ctrl-C or when either dies.
 *
 * It runs in a process of its own that loads only Node's built-ins (scripts/build-cli.ts bundles it):
 * it waits for the whole session, so what it holds is held for hours.
 */
export async function superviseUp(plan: UpPlan): Promise<void> {
  // The client token of the last `molf up` here, kept (0600, beside the connection it opens) so
  // that chats left open across a restart reconnect; the worker token is new each time: only
  // this process hands it out.
  const clientToken = (await loadConnection(plan.projectDir))?.token ?? (await newToken('client'));
  const workerToken = await newToken('worker');
  const children: Child[] = [];
  let stopping = false;

  const stopAll = async () => {
    stopping = true;
    // Stop the worker first so it doesn't spin reconnecting to a server that is going away.
    for (const child of [...children].reverse()) await stopChild(child);
  };
  onShutdownSignal(stopAll, {
    // A second Ctrl-C: don't leave children behind.
    onForce: () => {
      for (const child of children) child.process.kill('SIGKILL');
    },
  });
  // A hang-up (the terminal closed, `kill -HUP`) stops everything as Ctrl-C does; its default would end
  // this process at once and leave the children running. Kept for repeats, which change nothing.
  let hungUp = false;
  process.on('SIGHUP', () => {
    if (hungUp) return;
    hungUp = true;
    void stopAll().finally(() => process.exit(129));
  });
  // However else this process ends, its children end with it.
  process.once('exit', () => {
    for (const child of children) child.process.kill('SIGKILL');
  });

  const server = startChild(plan, plan.serverArgs, { client: clientToken, worker: workerToken });
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

  // The worker needs only its own token: the client token stays out of its process entirely.
  const worker = startChild(plan, [...plan.workerArgs, '--server', url], { worker: workerToken });
  children.push(worker);
  let workerReady: Record<string, unknown>;
  try {
    // The worker retries forever while the server is away, so the server dying now must end the wait.
    workerReady = await Promise.race([
      waitReady(worker, 'the worker'),
      server.exited.then((exit) => {
        throw new Error(`the server stopped while the worker was starting (${describeExit(exit)})`);
      }),
    ]);
  } catch (error) {
    await stopAll();
    throw error;
  }

  const savedTo = await saveConnection({ projectDir: plan.projectDir, url, token: clientToken });
  process.stdout.write(
    [
      '',
      'Molf is up.',
      `  web:     ${webLoginUrl(httpUrl, clientToken)}`,
      '           (open it to log in; the token in the link stays in the browser)',
      `  server:  ${url}   (health: ${httpUrl}/healthz)`,
      `  worker:  ${String(workerReady.name)} on ${plan.projectDir} (sandbox: ${String(workerReady.sandbox)})`,
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
    void child.exited.then(async (exit) => {
      if (stopping) return;
      process.stderr.write(`molf up: the ${what} stopped unexpectedly (${describeExit(exit)}); stopping\n`);
      await stopAll();
      process.exit(1);
    });
  }
}

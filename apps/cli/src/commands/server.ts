import { join } from 'node:path';
import { closeLogger, createLogger, type LogLevel } from '@molf/logging';
import {
  createServer,
  loadProjectConfigFile,
  loadServerConfigFile,
  safeParseOrigin,
  toCronSettings,
  toModelSettings,
  withProjectConfig,
} from '@molf/server';
import { webDistDir } from '@molf/web/dist-dir';
import { type Command, InvalidArgumentError, Option } from 'commander';
import { dataDirOption, hostOption, logLevelOption, portOption } from '../cli-options.ts';
import { currentMolfPaths } from '../current-molf-paths.ts';
import { finishStartup } from '../finish-startup.ts';
import type { TokenFile } from '../read-token-file.ts';
import { resolveTokenOption } from '../resolve-token-option.ts';
import { notifyParent, onShutdownSignal } from '../shutdown-signals.ts';
import { receiveTokensFromParent } from '../token-handover.ts';
import { webLoginUrl } from '../web-login-url.ts';

type ServerOptions = {
  host: string;
  port: number;
  dataDir?: string;
  clientToken?: string;
  clientTokenFile?: string;
  workerToken?: string;
  workerTokenFile?: string;
  allowedOrigin: string[];
  logLevel: LogLevel;
  model?: string;
  config?: string;
  projectConfig?: string;
};

export function registerServerCommand(program: Command): void {
  program
    .command('server')
    .description('run the Molf server: sessions, policy and the worker registry, on one HTTP + WebSocket port')
    .addOption(hostOption())
    .addOption(portOption())
    .addOption(dataDirOption())
    .addOption(
      new Option(
        '--client-token <token>',
        'fixed client token (kept in memory only; default: stored, generated at first start; ' +
          'visible to other processes in ps and /proc: prefer --client-token-file)',
      ).env('MOLF_CLIENT_TOKEN'),
    )
    .addOption(
      new Option('--client-token-file <path>', 'file holding a fixed client token, read at start').env(
        'MOLF_CLIENT_TOKEN_FILE',
      ),
    )
    .addOption(
      new Option(
        '--worker-token <token>',
        'fixed worker token (kept in memory only; default: stored, generated at first start; ' +
          'visible to other processes in ps and /proc: prefer --worker-token-file)',
      ).env('MOLF_WORKER_TOKEN'),
    )
    .addOption(
      new Option('--worker-token-file <path>', 'file holding a fixed worker token, read at start').env(
        'MOLF_WORKER_TOKEN_FILE',
      ),
    )
    .addOption(
      new Option(
        '--allowed-origin <origin>',
        'a web page origin that may open a WebSocket, http(s)://host[:port]; repeatable',
      )
        .argParser(collectOrigin)
        .default([], "only the server's own origin and the config file's allowedOrigins"),
    )
    .addOption(new Option('--model <provider/model>', 'default model, e.g. openai/gpt-4.1').env('MOLF_MODEL'))
    .addOption(
      new Option(
        '--config <file>',
        'JSONC config: model, provider keys, custom OpenAI-compatible providers, agent limits',
      ).env('MOLF_CONFIG'),
    )
    .addOption(
      new Option(
        '--project-config <file>',
        "a project's .molf/config.jsonc (its model and agent limits), over the config file and under the flags; " +
          '`molf up` passes its own',
      ),
    )
    .addOption(logLevelOption())
    .action(runServer);
}

function collectOrigin(value: string, previous: string[]): string[] {
  const parsed = safeParseOrigin(value);
  if (!parsed.ok) throw new InvalidArgumentError(parsed.error);
  return [...previous, parsed.value];
}

/** Fixed tokens: handed over by `molf up`, else from the flags, files or environment. */
async function readFixedTokens(options: ServerOptions): Promise<{ client?: TokenFile; worker?: TokenFile }> {
  const handed = await receiveTokensFromParent();
  if (handed !== undefined) {
    return {
      ...(handed.client === undefined ? {} : { client: { token: handed.client } }),
      ...(handed.worker === undefined ? {} : { worker: { token: handed.worker } }),
    };
  }
  const client = await resolveTokenOption({
    value: options.clientToken,
    file: options.clientTokenFile,
    flags: ['--client-token', '--client-token-file'],
  });
  const worker = await resolveTokenOption({
    value: options.workerToken,
    file: options.workerTokenFile,
    flags: ['--worker-token', '--worker-token-file'],
  });
  return { ...(client === undefined ? {} : { client }), ...(worker === undefined ? {} : { worker }) };
}

async function runServer(options: ServerOptions): Promise<void> {
  const fixed = await readFixedTokens(options);
  const paths = currentMolfPaths(options);
  const { dataDir } = paths;
  const logger = await createLogger({
    name: 'server',
    level: options.logLevel,
    ...(process.env.MOLF_LOG_FILE === 'none' ? {} : { filePath: join(paths.logsDir, 'server.log') }),
  });
  const user = await loadServerConfigFile(options.config ?? paths.configFile, {
    optional: options.config === undefined,
  });
  // Only a project file named here: a server never goes looking for its clients' files.
  const file =
    options.projectConfig === undefined
      ? user
      : withProjectConfig(user, await loadProjectConfigFile(options.projectConfig));
  const { models, agent } = toModelSettings(file, { model: options.model });
  for (const read of [fixed.client, fixed.worker]) if (read?.warning !== undefined) logger.warn(read.warning);
  const server = await createServer({
    models,
    agent,
    host: options.host,
    port: options.port,
    dataDir,
    tokens: { client: fixed.client?.token, worker: fixed.worker?.token },
    allowedOrigins: [...(file.allowedOrigins ?? []), ...options.allowedOrigin],
    webRoot: webDistDir,
    ...(file.notify === undefined ? {} : { notify: file.notify }),
    cron: toCronSettings(file),
    generateMissingTokens: true,
    logger,
  });
  onShutdownSignal(async () => {
    logger.info('shutting down');
    await server.close();
    await closeLogger(logger);
  });

  const lines = [
    `molf server listening on ${server.url} (health: ${server.httpUrl}/healthz)`,
    `web client: ${server.httpUrl}/ (log in with a client token)`,
    `data directory: ${dataDir}`,
    models.defaultModel === undefined
      ? 'default model: none (set --model provider/model, MOLF_MODEL or "model" in the config file)'
      : `default model: ${models.defaultModel}`,
  ];
  if (server.generatedTokens.client !== undefined || server.generatedTokens.worker !== undefined) {
    lines.push(
      'New tokens — shown once, only their hashes are stored (mint more with `molf token create`):',
      ...(server.generatedTokens.client === undefined
        ? []
        : [
            `  client token: ${server.generatedTokens.client}`,
            `  web login link: ${webLoginUrl(server.httpUrl, server.generatedTokens.client)}`,
          ]),
      ...(server.generatedTokens.worker === undefined ? [] : [`  worker token: ${server.generatedTokens.worker}`]),
    );
  }
  process.stdout.write(`${lines.join('\n')}\n`);
  notifyParent({ type: 'ready', url: server.url, httpUrl: server.httpUrl });
  finishStartup();
}

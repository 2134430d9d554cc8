import { join } from 'node:path';
import { createLogger, type LogLevel } from '@molf/logging';
import { createServer, defaultDataDir, loadServerConfigFile, toModelSettings } from '@molf/server';
import { type Command, Option } from 'commander';
import { dataDirOption, hostOption, logLevelOption, portOption } from '../cli-options.ts';
import { notifyParent, onShutdownSignal } from '../shutdown-signals.ts';

type ServerOptions = {
  host: string;
  port: number;
  dataDir?: string;
  clientToken?: string;
  workerToken?: string;
  logLevel: LogLevel;
  model?: string;
  config?: string;
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
        'fixed client token (kept in memory only; default: stored, generated at first start)',
      ).env('MOLF_CLIENT_TOKEN'),
    )
    .addOption(
      new Option(
        '--worker-token <token>',
        'fixed worker token (kept in memory only; default: stored, generated at first start)',
      ).env('MOLF_WORKER_TOKEN'),
    )
    .addOption(new Option('--model <provider/model>', 'default model, e.g. openai/gpt-4.1').env('MOLF_MODEL'))
    .addOption(
      new Option(
        '--config <file>',
        'JSONC config: model, provider keys, custom OpenAI-compatible providers, agent limits',
      ).env('MOLF_CONFIG'),
    )
    .addOption(logLevelOption())
    .action(runServer);
}

async function runServer(options: ServerOptions): Promise<void> {
  const dataDir = options.dataDir ?? defaultDataDir();
  const logger = await createLogger({
    name: 'server',
    level: options.logLevel,
    ...(process.env.MOLF_LOG_FILE === 'none' ? {} : { filePath: join(dataDir, 'logs', 'server.log') }),
  });
  const file = await loadServerConfigFile(options.config ?? join(dataDir, 'config.jsonc'), {
    optional: options.config === undefined,
  });
  const { models, agent } = toModelSettings(file, { model: options.model });
  const server = await createServer({
    models,
    agent,
    host: options.host,
    port: options.port,
    dataDir,
    tokens: { client: options.clientToken, worker: options.workerToken },
    generateMissingTokens: true,
    logger,
  });
  onShutdownSignal(async () => {
    logger.info('shutting down');
    await server.close();
    logger.flush();
  });

  const lines = [
    `molf server listening on ${server.url} (health: ${server.httpUrl}/healthz)`,
    `data directory: ${dataDir}`,
    models.defaultModel === undefined
      ? 'default model: none (set --model provider/model, MOLF_MODEL or "model" in the config file)'
      : `default model: ${models.defaultModel}`,
  ];
  if (server.generatedTokens.client !== undefined || server.generatedTokens.worker !== undefined) {
    lines.push(
      'New tokens — shown once, only their hashes are stored (mint more with `molf token create`):',
      ...(server.generatedTokens.client === undefined ? [] : [`  client token: ${server.generatedTokens.client}`]),
      ...(server.generatedTokens.worker === undefined ? [] : [`  worker token: ${server.generatedTokens.worker}`]),
    );
  }
  process.stdout.write(`${lines.join('\n')}\n`);
  notifyParent({ type: 'ready', url: server.url, httpUrl: server.httpUrl });
}

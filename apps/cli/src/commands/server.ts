import { join } from 'node:path';
import type { Logger } from '@molf/logging';
import { closeLogger, createLogger, type LogLevel } from '@molf/logging';
import {
  createServer,
  DATABASE_URL_ENV,
  defaultCertificateNames,
  describeDatabaseUrl,
  loadProjectConfigFile,
  loadServerCertificate,
  loadServerConfigFile,
  readServerCertificate,
  renewServerCertificate,
  type ServerCertificate,
  safeParseCertificateName,
  safeParseOrigin,
  toCronSettings,
  toModelSettings,
  withProjectConfig,
} from '@molf/server';
import { webDistDir } from '@molf/web/dist-dir';
import { type Command, InvalidArgumentError, Option } from 'commander';
import { chooseServerTls, type ServerTlsChoice } from '../choose-server-tls.ts';
import { dataDirOption, hostOption, logLevelOption, portOption } from '../cli-options.ts';
import { currentMolfPaths } from '../current-molf-paths.ts';
import { USAGE_EXIT_CODE } from '../exit-codes.ts';
import { finishStartup } from '../finish-startup.ts';
import { formatCertificateLines, formatFingerprintReport, formatRenewalNotice } from '../format-server-certificate.ts';
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
  /** `--tls` true, `--no-tls` false, neither undefined. */
  tls?: boolean;
  tlsCert?: string;
  tlsKey?: string;
  tlsSan: string[];
  renewCert?: boolean;
  printFingerprint?: boolean;
  database?: string;
  migrate?: boolean;
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
    .addOption(
      new Option('--tls', 'serve TLS (wss://, https://) on a loopback address too; on by default on any other address'),
    )
    .addOption(
      new Option(
        '--no-tls',
        'serve plain ws:// on an address other machines can reach (tokens travel in clear: behind a TLS proxy only)',
      ),
    )
    .addOption(
      new Option(
        '--tls-cert <file>',
        'your own certificate (PEM, with its chain) instead of the generated one; as a flag it turns TLS on',
      ).env('MOLF_TLS_CERT'),
    )
    .addOption(new Option('--tls-key <file>', 'the private key of --tls-cert (PEM, unencrypted)').env('MOLF_TLS_KEY'))
    .addOption(
      new Option(
        '--tls-san <name>',
        'a host name or IP address the generated certificate is also for (besides localhost, 127.0.0.1, ::1, ' +
          'this host name and --host); repeatable, or comma-separated',
      )
        .env('MOLF_TLS_SAN')
        .argParser(collectCertificateNames)
        .default([], 'none'),
    )
    .addOption(
      new Option(
        '--renew-cert',
        'make a new generated certificate (the old one kept as cert.pem.old), then start; clients must trust it again',
      ),
    )
    .addOption(
      new Option(
        '--print-fingerprint',
        "print the SHA-256 fingerprint of this server's certificate (the data directory's, or --tls-cert) and exit",
      ),
    )
    .addOption(
      new Option(
        '--database <url>',
        'keep sessions and their events in PostgreSQL (postgres://user:password@host:port/database), ' +
          'shared by every server given the same URL; default: files in the data directory',
      ).env(DATABASE_URL_ENV),
    )
    .addOption(
      new Option(
        '--migrate',
        "bring the database's schema up to this version first (back it up before); without it an older schema is refused",
      ),
    )
    .addOption(logLevelOption())
    .action(runServer);
}

/** `--tls-san` values (and `MOLF_TLS_SAN`), each checked: an IP address or a DNS name. */
function collectCertificateNames(value: string, previous: string[]): string[] {
  const names = value
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  return [
    ...previous,
    ...names.map((name) => {
      const parsed = safeParseCertificateName(name);
      if (!parsed.ok) throw new InvalidArgumentError(parsed.error);
      return parsed.value;
    }),
  ];
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

async function runServer(options: ServerOptions, command: Command): Promise<void> {
  const paths = currentMolfPaths(options);
  const { dataDir } = paths;
  if (options.printFingerprint === true) {
    await printFingerprint({ dataDir, certFile: options.tlsCert });
    return;
  }
  const fromWhere = (name: string) => (command.getOptionValueSource(name) === 'env' ? 'env' : 'flag');
  const tlsChoice = chooseServerTls({
    host: options.host,
    tls: options.tls,
    certFile: options.tlsCert === undefined ? undefined : { value: options.tlsCert, from: fromWhere('tlsCert') },
    keyFile: options.tlsKey === undefined ? undefined : { value: options.tlsKey, from: fromWhere('tlsKey') },
    renew: options.renewCert === true,
  });
  if (!tlsChoice.ok) command.error(`molf server: ${tlsChoice.error}`, { exitCode: USAGE_EXIT_CODE });
  if (options.migrate === true && options.database === undefined) {
    command.error(`molf server: --migrate needs --database (or ${DATABASE_URL_ENV}): only a database has a schema`, {
      exitCode: USAGE_EXIT_CODE,
    });
  }
  const fixed = await readFixedTokens(options);
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
  const certificate = await prepareCertificate(tlsChoice.value, {
    dataDir,
    names: defaultCertificateNames({ host: options.host, extraNames: options.tlsSan }),
    logger,
  });
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
    ...(certificate === undefined ? {} : { tls: { cert: certificate.cert, key: certificate.key } }),
    ...(options.database === undefined
      ? {}
      : { database: { url: options.database, schema: options.migrate === true ? 'migrate' : 'create' } }),
    logger,
  });
  onShutdownSignal(async () => {
    logger.info('shutting down');
    await server.close();
    await closeLogger(logger);
  });

  const lines = [
    `molf server listening on ${server.url} (health: ${server.httpUrl}/healthz)`,
    ...(certificate === undefined ? [] : formatCertificateLines(certificate)),
    ...(tlsChoice.value.type === 'generated' && tlsChoice.value.renew && certificate !== undefined
      ? [formatRenewalNotice({ certFile: certificate.certFile, host: options.host, port: server.port })]
      : []),
    `web client: ${server.httpUrl}/ (log in with a client token)`,
    `data directory: ${dataDir}`,
    ...(options.database === undefined
      ? []
      : [`database: ${describeDatabaseUrl(options.database)} (sessions and events)`]),
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

/**
 * The certificate to serve, per the choice: none (plain), the user's files, or the generated one
 * (renewed first on `--renew-cert`). What a person must act on (a plain server others can reach,
 * an end within 30 days) goes to stderr too, where it is seen among the log lines.
 */
async function prepareCertificate(
  choice: ServerTlsChoice,
  options: { dataDir: string; names: string[]; logger: Logger },
): Promise<ServerCertificate | undefined> {
  const { logger } = options;
  switch (choice.type) {
    case 'plain':
      if (choice.warning !== undefined) {
        logger.warn(choice.warning);
        process.stderr.write(`molf server: WARNING: ${choice.warning}\n`);
      }
      return undefined;
    case 'files':
    case 'generated': {
      const certificate =
        choice.type === 'files'
          ? await loadServerCertificate({ ...options, certFile: choice.certFile, keyFile: choice.keyFile })
          : choice.renew
            ? await renewServerCertificate(options)
            : await loadServerCertificate(options);
      for (const warning of certificate.warnings) process.stderr.write(`molf server: warning: ${warning}\n`);
      return certificate;
    }
  }
}

/** `--print-fingerprint`: exit 0 with the fingerprint, or 1 saying there is no certificate yet. */
async function printFingerprint(options: { dataDir: string; certFile: string | undefined }): Promise<void> {
  const described = await readServerCertificate(options);
  if (described === undefined) {
    process.stderr.write(
      `molf server: no certificate in ${options.dataDir} yet: one is made at the first start with TLS ` +
        '(on an address other than loopback, or with --tls)\n',
    );
    process.exitCode = 1;
    return;
  }
  process.stdout.write(formatFingerprintReport(described));
}

import { isLogLevel, type LogLevel } from '@molf/logging';
import { InvalidArgumentError, Option } from 'commander';

export function parsePort(value: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new InvalidArgumentError('a port is an integer from 0 to 65535 (0 picks a free port)');
  }
  return port;
}

export function parseLogLevel(value: string): LogLevel {
  if (!isLogLevel(value)) {
    throw new InvalidArgumentError('use one of trace, debug, info, warn, error, fatal, silent');
  }
  return value;
}

export const logLevelOption = () =>
  new Option('--log-level <level>', 'log level: trace, debug, info, warn, error, fatal, silent')
    .env('MOLF_LOG_LEVEL')
    .argParser(parseLogLevel)
    .default('info');

export const hostOption = () =>
  new Option('--host <host>', 'address to listen on').env('MOLF_HOST').default('127.0.0.1');

export const portOption = () =>
  new Option('--port <port>', 'port to listen on; 0 picks a free one')
    .env('MOLF_PORT')
    .argParser(parsePort)
    .default(7600);

export const dataDirOption = () =>
  new Option(
    '--data-dir <dir>',
    'one directory for the server data, config.jsonc and logs (default: $MOLF_HOME, else the XDG directories on Linux: ~/.local/share/molf…, ~/.molf elsewhere)',
  ).env('MOLF_HOME');

export const serverUrlOption = () =>
  new Option('--server <url>', 'server WebSocket URL, e.g. ws://127.0.0.1:7600').env('MOLF_SERVER_URL');

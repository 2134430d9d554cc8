import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { type DestinationStream, type Logger, pino, type StreamEntry } from 'pino';
import type { LogLevel } from './log-levels.ts';

export type { Logger } from 'pino';

/** Keys whose values never reach a log line, wherever they sit in a logged object. */
const SECRET_KEYS = [
  'token',
  'clientToken',
  'workerToken',
  'apiKey',
  'authorization',
  'password',
  'secret',
  'connectionParams',
];
const REDACT_PATHS = SECRET_KEYS.flatMap((key) => [key, `*.${key}`, `*.*.${key}`, `headers.${key}`]);

/** Any Molf token or `Bearer …` value that slipped into free text. */
const SECRET_TEXT = /molf_[cw]_[A-Za-z0-9_-]{8,}|Bearer\s+[A-Za-z0-9._~+/=-]{8,}/g;

export function redactText(text: string): string {
  return text.replace(SECRET_TEXT, '[redacted]');
}

export type LoggerOptions = {
  /** Shown as `name` on every line, e.g. `server`, `worker`. */
  name: string;
  /** Default `info`; `MOLF_LOG_LEVEL` is read by the callers, not here. */
  level?: LogLevel;
  /**
   * Console output: `pretty` for people, `json` for machines, `none` for nothing.
   * Default `auto`: pretty when stdout is a TTY, JSON otherwise.
   */
  console?: 'auto' | 'pretty' | 'json' | 'none';
  /**
   * JSON log file, rotated at 5 MB keeping 5 files (`name.1.log`, `name.2.log`…).
   * Default: no file.
   */
  filePath?: string;
  /** Where console output goes. Default stdout; tests pass their own stream. */
  destination?: DestinationStream;
};

/** Size and count of rotated log files. */
export const LOG_ROTATION = { size: '5m', count: 5 } as const;

export async function createLogger(options: LoggerOptions): Promise<Logger> {
  const level = options.level ?? 'info';
  const streams: StreamEntry[] = [];
  // multistream entries take a real level; 'silent' simply means no streams at all.
  const streamLevel = level === 'silent' ? 'fatal' : level;
  const consoleMode =
    options.console === undefined || options.console === 'auto'
      ? process.stdout.isTTY && options.destination === undefined
        ? 'pretty'
        : 'json'
      : options.console;

  if (level === 'silent') {
    // nothing to set up
  } else if (consoleMode === 'pretty') {
    // pino-pretty and pino-roll (with date-fns, 300 modules) are imported only when used: a console
    // that is not a terminal never needs the first, a process without a log file the second.
    const { default: pretty } = await import('pino-pretty');
    streams.push({
      level: streamLevel,
      stream: pretty({ colorize: true, sync: true, destination: options.destination ?? 1, ignore: 'pid,hostname' }),
    });
  } else if (consoleMode === 'json') {
    streams.push({ level: streamLevel, stream: options.destination ?? pino.destination({ dest: 1, sync: true }) });
  }

  if (options.filePath !== undefined && level !== 'silent') {
    mkdirSync(dirname(options.filePath), { recursive: true, mode: 0o700 });
    const { default: pinoRoll } = await import('pino-roll');
    const file = await pinoRoll({
      file: options.filePath,
      size: LOG_ROTATION.size,
      limit: { count: LOG_ROTATION.count },
      mkdir: true,
    });
    streams.push({ level: streamLevel, stream: file });
  }

  return pino(
    {
      name: options.name,
      level,
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      hooks: {
        logMethod(args, method) {
          const cleaned = args.map((argument) =>
            typeof argument === 'string' ? redactText(argument) : argument,
          ) as typeof args;
          method.apply(this, cleaned);
        },
      },
      serializers: {
        err: (error: unknown) => {
          const serialized = pino.stdSerializers.err(error as Error);
          if (typeof serialized.message === 'string') serialized.message = redactText(serialized.message);
          if (typeof serialized.stack === 'string') serialized.stack = redactText(serialized.stack);
          return serialized;
        },
      },
    },
    streams.length === 0 ? pino.destination('/dev/null') : pino.multistream(streams),
  );
}

/** A logger that drops everything: the default for factories used in tests. */
export function createSilentLogger(): Logger {
  return pino({ level: 'silent' });
}

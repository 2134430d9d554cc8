import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { type DestinationStream, type Logger, pino, type StreamEntry } from 'pino';
import pretty from 'pino-pretty';
import pinoRoll from 'pino-roll';

export type { Logger } from 'pino';

export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export function isLogLevel(value: string): value is LogLevel {
  return (LOG_LEVELS as readonly string[]).includes(value);
}

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
    streams.push({
      level: streamLevel,
      stream: pretty({ colorize: true, sync: true, destination: options.destination ?? 1, ignore: 'pid,hostname' }),
    });
  } else if (consoleMode === 'json') {
    streams.push({ level: streamLevel, stream: options.destination ?? pino.destination({ dest: 1, sync: true }) });
  }

  if (options.filePath !== undefined && level !== 'silent') {
    mkdirSync(dirname(options.filePath), { recursive: true, mode: 0o700 });
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

import { mkdirSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import type { Writable } from 'node:stream';
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
   * Default `auto`: pretty when the console is a terminal, JSON otherwise. Below `debug` neither
   * shows a stack trace: an error is its message and its causes' on the line; the stack goes to
   * the log file, and to the console at `debug` and `trace`.
   */
  console?: 'auto' | 'pretty' | 'json' | 'none';
  /**
   * JSON log file (`…/server.log`), rotated like logrotate: at 5 MB it becomes `server.1.log`, the
   * one before `server.2.log`, and so on; 5 files at most. Default: no file.
   */
  filePath?: string;
  /** Rotation of the log file; default {@link LOG_ROTATION}. Tests make it small. */
  rotation?: { size: `${number}${'B' | 'K' | 'M'}`; files: number };
  /**
   * Where console output goes. Default stdout; tests pass their own stream. A stream with
   * `isTTY: true` counts as a terminal.
   */
  destination?: DestinationStream;
  /** Read for `NO_COLOR` (set and not empty: no colour, also on a terminal). Default `process.env`. */
  env?: NodeJS.ProcessEnv;
};

/** When the log file rotates, and how many files (the live one included) are kept. */
export const LOG_ROTATION = { size: '5M', files: 5 } as const;

/** How each logger with a file closes it (see {@link closeLogger}). */
const fileClosers = new WeakMap<Logger, () => Promise<void>>();

export async function createLogger(options: LoggerOptions): Promise<Logger> {
  const level = options.level ?? 'info';
  const streams: StreamEntry[] = [];
  let file: Writable | undefined;
  // multistream entries take a real level; 'silent' simply means no streams at all.
  const streamLevel = level === 'silent' ? 'fatal' : level;
  const terminal =
    options.destination === undefined
      ? process.stdout.isTTY === true
      : (options.destination as { isTTY?: boolean }).isTTY === true;
  const consoleMode =
    options.console === undefined || options.console === 'auto' ? (terminal ? 'pretty' : 'json') : options.console;
  // People debugging want the whole error; anyone else wants to know what happened, in one line.
  const showStacks = level === 'debug' || level === 'trace';

  if (level === 'silent') {
    // nothing to set up
  } else if (consoleMode === 'pretty') {
    // pino-pretty and the file rotation are imported only when used: a console that is not a
    // terminal never needs the first, a process without a log file the second.
    const { default: pretty } = await import('pino-pretty');
    streams.push({
      level: streamLevel,
      stream: pretty({
        // https://no-color.org: set and not empty means no colour, whatever the terminal.
        colorize: terminal && !hasNoColor(options.env ?? process.env),
        sync: true,
        destination: options.destination ?? 1,
        ignore: showStacks ? 'pid,hostname' : 'pid,hostname,err',
        singleLine: !showStacks,
        messageFormat: (log, messageKey) => formatMessage(log, messageKey, { withError: !showStacks }),
      }),
    });
  } else if (consoleMode === 'json') {
    const stdout = options.destination ?? pino.destination({ dest: 1, sync: true });
    streams.push({ level: streamLevel, stream: showStacks ? stdout : withoutStacks(stdout) });
  }

  if (options.filePath !== undefined && level !== 'silent') {
    mkdirSync(dirname(options.filePath), { recursive: true, mode: 0o700 });
    file = await openRotatingFile(options.filePath, options.rotation ?? LOG_ROTATION);
    streams.push({ level: streamLevel, stream: file });
  }

  const logger = pino(
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
  if (file !== undefined) fileClosers.set(logger, closeWhenWritten(file));
  return logger;
}

/**
 * Writes out what the logger still holds and closes its log file: the last lines of a process that
 * is about to exit (a shutdown, a fatal error) would otherwise be lost with the file's buffer.
 * The logger must not be used afterwards.
 */
export async function closeLogger(logger: Logger): Promise<void> {
  logger.flush();
  await fileClosers.get(logger)?.();
}

function closeWhenWritten(file: Writable): () => Promise<void> {
  return () =>
    new Promise<void>((resolve) => {
      if (file.closed || file.destroyed) {
        resolve();
        return;
      }
      file.once('close', () => resolve());
      file.once('error', () => resolve());
      file.end();
    });
}

/**
 * The log file as a stream rotated by size (rotating-file-stream: no dependencies and about 2 MiB
 * loaded, where pino-roll brought date-fns' 300 modules and 9 MiB into every worker and server).
 */
async function openRotatingFile(filePath: string, rotation: NonNullable<LoggerOptions['rotation']>): Promise<Writable> {
  const { createStream } = await import('rotating-file-stream');
  const name = basename(filePath);
  const stem = name.endsWith('.log') ? name.slice(0, -'.log'.length) : name;
  const stream = createStream((index) => (index === null || index === undefined ? name : `${stem}.${index}.log`), {
    path: dirname(filePath),
    size: rotation.size,
    rotate: rotation.files - 1,
    mode: 0o600,
  });
  // A full disk or a removed directory must not take the process down: the console goes on, and
  // says once that the file stopped.
  let reported = false;
  stream.on('error', (error: Error) => {
    if (reported) return;
    reported = true;
    process.stderr.write(`molf: the log file ${filePath} stopped: ${error.message}\n`);
  });
  return stream;
}

function hasNoColor(env: NodeJS.ProcessEnv): boolean {
  return env.NO_COLOR !== undefined && env.NO_COLOR !== '';
}

/** The line's message, followed by its error's message (which already carries its causes'). */
function formatMessage(log: Record<string, unknown>, messageKey: string, options: { withError: boolean }): string {
  const message = typeof log[messageKey] === 'string' ? (log[messageKey] as string) : '';
  const error = log.err as { message?: unknown; code?: unknown; data?: { code?: unknown } } | undefined;
  if (!options.withError || typeof error?.message !== 'string') return message;
  // A MolfError's code, or the one a tRPC client error carries from the server.
  const errorCode = error.code ?? error.data?.code;
  const code = typeof errorCode === 'string' ? ` (${errorCode})` : '';
  return message === '' ? `${error.message}${code}` : `${message}: ${error.message}${code}`;
}

/**
 * A console destination whose lines carry no stack traces: the `stack` of a logged error (and of
 * its nested errors) is removed. Only lines that have one are parsed again, so others cost nothing.
 */
function withoutStacks(destination: DestinationStream): DestinationStream {
  return {
    write(line: string) {
      if (!line.includes('"stack":')) return destination.write(line);
      const entry = JSON.parse(line) as Record<string, unknown>;
      removeStacks(entry.err);
      return destination.write(`${JSON.stringify(entry)}\n`);
    },
  };
}

function removeStacks(value: unknown, depth = 0): void {
  if (typeof value !== 'object' || value === null || depth > 8) return;
  for (const [key, inner] of Object.entries(value)) {
    if (key === 'stack') delete (value as Record<string, unknown>)[key];
    else removeStacks(inner, depth + 1);
  }
}

/** A logger that drops everything: the default for factories used in tests. */
export function createSilentLogger(): Logger {
  return pino({ level: 'silent' });
}

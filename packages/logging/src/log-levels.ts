/**
 * The log levels, apart from the logger: the CLI checks a `--log-level` flag with them in processes
 * that never log themselves (the `molf up` supervisor), and so never load pino.
 */
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export function isLogLevel(value: string): value is LogLevel {
  return (LOG_LEVELS as readonly string[]).includes(value);
}

export {
  createLogger,
  createSilentLogger,
  isLogLevel,
  LOG_LEVELS,
  LOG_ROTATION,
  type Logger,
  type LoggerOptions,
  type LogLevel,
  redactText,
} from './create-logger.ts';

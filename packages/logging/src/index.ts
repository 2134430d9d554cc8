export {
  createLogger,
  createSilentLogger,
  isLogLevel,
  LOG_LEVELS,
  LOG_ROTATION,
  redactText,
  type Logger,
  type LoggerOptions,
  type LogLevel,
} from './create-logger.ts';

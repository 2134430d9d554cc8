export {
  closeLogger,
  createLogger,
  createSilentLogger,
  LOG_ROTATION,
  type Logger,
  type LoggerOptions,
  redactText,
} from './create-logger.ts';
export { isLogLevel, LOG_LEVELS, type LogLevel } from './log-levels.ts';
export { createProblemLog, type FileProblem } from './log-new-problems.ts';

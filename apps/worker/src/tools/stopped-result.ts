import { type ToolResult, toErrorResult } from '@molf/protocol';
import { abortedByTimeout } from './tool-handler.ts';

/**
 * The result of a call stopped before it finished, as its signal says: by the call's timeout
 * (`timeout`) or by a cancel (`cancelled`). A tool that returns it keeps its own wording.
 */
export function toStoppedResult(options: {
  tool: string;
  signal: AbortSignal;
  /** What to try instead after a timeout; default none. */
  hint?: string;
}): ToolResult {
  return abortedByTimeout(options.signal)
    ? toErrorResult(
        'timeout',
        `${options.tool} did not finish within its timeout and was stopped.${options.hint === undefined ? '' : ` ${options.hint}`}`,
      )
    : toErrorResult('cancelled', `${options.tool} was stopped.`);
}

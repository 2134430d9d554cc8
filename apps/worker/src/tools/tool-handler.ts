import type { Logger } from '@molf/logging';
import { MolfError, type ToolCallId, type ToolDefinition, type ToolResult } from '@molf/protocol';
import type { z } from 'zod';
import type { SandboxRunner } from '../sandbox/index.ts';
import type { ProcessReaper } from './process-reaper.ts';
import type { ReadTracker } from './read-tracker.ts';
import type { PathPolicy } from './resolve-tool-path.ts';

export type ToolContext = {
  toolCallId: ToolCallId;
  workdir: string;
  /** Where paths may lead; resolve every path argument with resolveToolPath(paths, …). */
  paths: PathPolicy;
  /** The session the call belongs to, if the server said. */
  sessionId: string | undefined;
  /** Which versions of which files each session has seen. */
  reads: ReadTracker;
  /** Aborted on cancel or when the call's timeout passes. */
  signal: AbortSignal;
  /**
   * Whether the server's read_file rules deny a file (by its forms: relative to the workdir, and
   * absolute); tools that read many files skip those. Absent: nothing is denied.
   */
  isReadDenied?: (forms: readonly string[]) => boolean;
  /** The worker's OS sandbox, when commands run in it. Absent: they run as the worker's user. */
  sandbox?: SandboxRunner;
  /** Ends the process groups of commands when the worker dies, even by SIGKILL. Absent: nothing does. */
  reaper?: ProcessReaper;
  logger: Logger;
};

/** Whether a tool's signal was aborted because the call's timeout passed (not by a cancel). */
export function abortedByTimeout(signal: AbortSignal): boolean {
  const reason: unknown = signal.reason;
  return signal.aborted && reason instanceof MolfError && reason.code === 'timeout';
}

/** A worker-side tool: its shared definition plus the code that runs it. */
export type ToolHandler<Args extends z.ZodType = z.ZodType> = {
  definition: ToolDefinition<Args>;
  run(args: z.infer<Args>, context: ToolContext): Promise<ToolResult>;
};

export function defineToolHandler<Args extends z.ZodType>(handler: ToolHandler<Args>): ToolHandler<Args> {
  return handler;
}

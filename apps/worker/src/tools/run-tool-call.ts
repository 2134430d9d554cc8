import type { Logger } from '@molf/logging';
import { createReadDenial } from '@molf/permissions';
import { type Job, MolfError, type ToolResult, toErrorResult, toInvalidArgumentsResult } from '@molf/protocol';
import type { SandboxRunner } from '../sandbox/index.ts';
import type { ProcessReaper } from './process-reaper.ts';
import type { ReadTracker } from './read-tracker.ts';
import { checkApprovedPaths, type PathPolicy } from './resolve-tool-path.ts';
import { abortedByTimeout, type ToolHandler } from './tool-handler.ts';
import { truncateAndStore } from './truncate-output.ts';

/**
 * Runs one job: finds the tool, validates its arguments, enforces its timeout. Every outcome is
 * a result; nothing is thrown, because a failed tool call is something the model reads.
 */
type RunOptions = {
  job: Job;
  tools: ReadonlyMap<string, ToolHandler>;
  paths: PathPolicy;
  reads: ReadTracker;
  /** Aborted by a cancel; the call's timeout aborts it too. */
  controller: AbortController;
  /** The worker's OS sandbox for commands, when active. */
  sandbox?: SandboxRunner | undefined;
  /** Ends commands' process groups with the worker. */
  reaper?: ProcessReaper | undefined;
  logger: Logger;
};

/** What a call acted on, for the audit line: its path, command or pattern, cut to 200 characters. */
function subjectOf(args: Record<string, unknown>): string | undefined {
  const subject = [args.path, args.command, args.pattern].find((value) => typeof value === 'string');
  return typeof subject === 'string' ? subject.slice(0, 200) : undefined;
}

/** Runs one call and logs one structured audit line for it: tool, subject, outcome, duration, bytes. */
export async function runToolCall(options: RunOptions): Promise<ToolResult> {
  const started = performance.now();
  const result = await executeToolCall(options);
  if (!options.logger.isLevelEnabled('info')) return result;
  options.logger.info(
    {
      toolCallId: options.job.toolCallId,
      tool: options.job.toolName,
      subject: subjectOf(options.job.args),
      outcome: result.error === undefined ? 'ok' : (result.meta?.errorKind ?? 'error'),
      durationMs: Math.round(performance.now() - started),
      bytes: Buffer.byteLength(result.output),
      truncated: result.meta?.truncated === true,
    },
    'tool call',
  );
  return result;
}

async function executeToolCall(options: RunOptions): Promise<ToolResult> {
  const { job, tools } = options;
  const handler = tools.get(job.toolName);
  if (handler === undefined) {
    return toErrorResult(
      'tool_not_found',
      `This worker has no tool "${job.toolName}". Available: ${[...tools.keys()].join(', ')}.`,
    );
  }
  if (job.approvedPaths !== undefined) {
    const moved = await checkApprovedPaths(options.paths, job.approvedPaths);
    if (moved !== undefined) return moved;
  }
  const parsed = handler.definition.args.safeParse(job.args);
  if (!parsed.success) {
    return toInvalidArgumentsResult(job.toolName, parsed.error);
  }
  // One controller for cancel and timeout, and a timer cleared when the call ends:
  // AbortSignal.timeout() would keep every finished call alive until its deadline.
  const { controller } = options;
  const timer = setTimeout(
    () => controller.abort(new MolfError('timeout', `timed out after ${job.timeoutMs} ms`)),
    job.timeoutMs,
  );
  try {
    const result = await handler.run(parsed.data, {
      toolCallId: job.toolCallId,
      workdir: options.paths.workdir,
      paths: options.paths,
      sessionId: job.sessionId,
      reads: options.reads,
      signal: controller.signal,
      ...(job.readRules === undefined ? {} : { isReadDenied: createReadDenial(job.readRules) }),
      ...(options.sandbox === undefined ? {} : { sandbox: options.sandbox }),
      ...(options.reaper === undefined ? {} : { reaper: options.reaper }),
      logger: options.logger,
    });
    // A tool that reported its own timeout (with partial output) keeps its result.
    if (abortedByTimeout(controller.signal) && result.meta?.errorKind === undefined) {
      return toErrorResult('timeout', `${job.toolName} did not finish within ${job.timeoutMs} ms and was stopped.`);
    }
    // The safety net: a tool that handles its own truncation says so in meta.truncated.
    if (result.meta?.truncated !== undefined) return result;
    const truncated = await truncateAndStore({
      text: result.output,
      toolCallId: job.toolCallId,
      workdir: options.paths.workdir,
    });
    return truncated === undefined
      ? result
      : { ...result, output: truncated.output, meta: { ...result.meta, ...truncated.meta } };
  } catch (error) {
    options.logger.error({ err: error, toolCallId: job.toolCallId, toolName: job.toolName }, 'tool threw');
    return toErrorResult('internal', `${job.toolName} failed unexpectedly: ${(error as Error).message}`);
  } finally {
    clearTimeout(timer);
  }
}

import type { ReadRule } from '@molf/permissions';
import { type FileChangePreview, isFileChangeTool, type WorkerId } from '@molf/protocol';
import type { JobDispatcher } from '../workers/job-dispatcher.ts';

/**
 * How long an approval waits for its preview: past it the approval is published without one (a
 * note says why), so a slow or stuck worker never holds a question back.
 */
export const DEFAULT_PREVIEW_TIMEOUT_MS = 3_000;

/**
 * What an edit_file or write_file call that waits for a person would change, asked of its worker
 * (`file-change/preview`, computed there by the tool's own code against the file as it is now);
 * undefined for other tools. Never throws and never waits past `timeoutMs`: a worker that is
 * offline, slow or fails gives a preview with no diff and a note saying so.
 */
export async function requestFileChangePreview(options: {
  dispatcher: Pick<JobDispatcher, 'request'>;
  workerId: WorkerId;
  tool: string;
  args: Record<string, unknown>;
  sessionId: string;
  /** The call's read_file rules: the worker does not show a file they deny or ask about. */
  readRules: ReadRule[];
  /** Default {@link DEFAULT_PREVIEW_TIMEOUT_MS}. */
  timeoutMs?: number;
  /** The call's own signal (the turn aborted): the preview is no longer needed. */
  signal?: AbortSignal | undefined;
}): Promise<FileChangePreview | undefined> {
  const { tool, args } = options;
  if (!isFileChangeTool(tool)) return undefined;
  const timeoutMs = options.timeoutMs ?? DEFAULT_PREVIEW_TIMEOUT_MS;
  // The dispatcher's own deadline adds a margin meant for tool calls; this one must be short.
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), timeoutMs);
  try {
    const outcome = await options.dispatcher.request({
      workerId: options.workerId,
      request: {
        method: 'file-change/preview',
        params: { tool, args, sessionId: options.sessionId, readRules: options.readRules },
      },
      timeoutMs,
      signal: options.signal === undefined ? deadline.signal : AbortSignal.any([deadline.signal, options.signal]),
    });
    if (outcome.ok) return outcome.result;
    const why = deadline.signal.aborted
      ? `the worker did not answer within ${formatSeconds(timeoutMs)}`
      : `the worker could not compute it (${outcome.message})`;
    return {
      path: typeof args.path === 'string' ? args.path.slice(0, 4_096) : '',
      diff: '',
      truncated: false,
      note: `No preview of the change: ${why}.`.slice(0, 4_000),
    };
  } finally {
    clearTimeout(timer);
  }
}

function formatSeconds(ms: number): string {
  return ms < 1_000 ? `${ms} ms` : `${Math.round(ms / 100) / 10} s`;
}

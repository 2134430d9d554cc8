import { realpath } from 'node:fs/promises';
import { join } from 'node:path';
import { type ToolResult, toErrorResult } from '@molf/protocol';
import { isInside, type PathPolicy } from './resolve-tool-path.ts';

/** The worker's own directory in the workdir: its identity (worker.json), logs and saved tool outputs. */
export const WORKER_STATE_DIR = '.molf';

/**
 * Refuses a write_file or edit_file whose canonical target is in the workdir's `.molf` (or is
 * it), whatever the permission rules say: a model that rewrote worker.json would take over
 * another worker's identity, and one that rewrote a saved output would change what it reads
 * back as a command's result. `canonical` is the target with every link resolved, so `x/../.molf`
 * and a link into `.molf` are caught; so is a `.molf` that is itself a link within the workdir.
 * Reading is not refused: the truncation note sends the model to `.molf/tool-output/`.
 */
export async function refuseWorkerStateWrite(options: {
  paths: PathPolicy;
  /** The target as resolveToolPath made it canonical. */
  canonical: string;
  /** The path as the model gave it, for the message. */
  shownPath: string;
}): Promise<ToolResult | undefined> {
  const stateDir = join(options.paths.workdir, WORKER_STATE_DIR);
  const realStateDir = await realpath(stateDir).catch(() => stateDir);
  if (!isInside(options.canonical, stateDir) && !isInside(options.canonical, realStateDir)) return undefined;
  return toErrorResult(
    'permission_denied',
    `${options.shownPath} is in the worker’s own .molf directory (its identity, logs and saved tool outputs), which write_file and edit_file never change. Read saved outputs with read_file; write your files elsewhere in the workdir.`,
  );
}

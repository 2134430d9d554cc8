import type { Stats } from 'node:fs';
import { mkdir, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { type ToolResult, toErrorResult, toolDefinitions } from '@molf/protocol';
import writeFileAtomic from 'write-file-atomic';
import type { z } from 'zod';
import { type ContentBefore, diffFileChange, diffPathOf, readContentBefore } from './diff-file-change.ts';
import type { FileChangeContext } from './edit-file.ts';
import { resolveFileTarget } from './file-target.ts';
import { refuseWorkerStateWrite } from './refuse-worker-state-write.ts';
import { defineToolHandler } from './tool-handler.ts';

type WriteFileArgs = z.infer<typeof toolDefinitions.write_file.args>;

/**
 * What a write_file call would do, with every check the tool makes before writing and no change
 * on disk: the target (confined, not the worker's own state), whether a file is there (and it is
 * unchanged since the session read it, or may be overwritten), and whether its directory must be
 * made first. What the tool writes and what a preview shows both start here.
 */
export async function planWrite(
  args: WriteFileArgs,
  context: FileChangeContext,
): Promise<
  | { ok: true; value: { canonical: string; stats: Stats | undefined; makeDirectory: boolean } }
  | { ok: false; error: ToolResult }
> {
  const { paths, reads, sessionId } = context;
  const target = await resolveFileTarget(paths, args.path);
  if (!target.ok) return target;
  const { canonical, stats } = target.value;
  const intoWorkerState = await refuseWorkerStateWrite({ paths, canonical, shownPath: args.path });
  if (intoWorkerState !== undefined) return { ok: false, error: intoWorkerState };
  if (stats !== undefined && args.overwrite === false) {
    return {
      ok: false,
      error: toErrorResult(
        'already_exists',
        `${args.path} exists and overwrite is false; pick another path or edit it.`,
      ),
    };
  }
  if (stats !== undefined) {
    const refused = reads.checkBeforeChange(sessionId, canonical, args.path, stats);
    if (refused !== undefined) return { ok: false, error: refused };
  }
  const parentInfo = await stat(dirname(canonical)).catch(() => undefined);
  if (parentInfo === undefined && args.createDirectories !== true) {
    return {
      ok: false,
      error: toErrorResult(
        'not_found',
        `The directory of ${args.path} does not exist; send createDirectories: true to create it.`,
      ),
    };
  }
  if (parentInfo !== undefined && !parentInfo.isDirectory()) {
    return { ok: false, error: toErrorResult('not_regular_file', `The parent of ${args.path} is not a directory.`) };
  }
  return { ok: true, value: { canonical, stats, makeDirectory: parentInfo === undefined } };
}

/** What a diff of a write starts from: nothing for a new file, else the file as far as it may be shown. */
export function contentBeforeWrite(
  plan: { canonical: string; stats: Stats | undefined },
  context: Pick<FileChangeContext, 'paths'> & { isReadDenied?: ((forms: readonly string[]) => boolean) | undefined },
): Promise<ContentBefore> {
  if (plan.stats === undefined) return Promise.resolve({ type: 'absent' });
  return readContentBefore({
    paths: context.paths,
    canonical: plan.canonical,
    size: plan.stats.size,
    isReadDenied: context.isReadDenied,
  });
}

export const writeFileTool = defineToolHandler({
  definition: toolDefinitions.write_file,
  async run(args, context) {
    const { paths, reads, sessionId } = context;
    const plan = await planWrite(args, context);
    if (!plan.ok) return plan.error;
    const { canonical, stats, makeDirectory } = plan.value;
    // Read before the write, for the diff the result carries.
    const before = await contentBeforeWrite(plan.value, context);
    if (makeDirectory) await mkdir(dirname(canonical), { recursive: true });

    // Atomic (temp file in the same directory, fsync, rename) and keeps an existing file's mode.
    // The canonical path is written, so a link inside the workdir is written through, never replaced.
    await writeFileAtomic(canonical, args.content);
    reads.remember(sessionId, canonical, await stat(canonical));
    const bytes = Buffer.byteLength(args.content);
    return {
      output: `${stats !== undefined ? 'Overwrote' : 'Created'} ${args.path} (${bytes} bytes written).`,
      meta: { truncated: false },
      diff: diffFileChange({ path: diffPathOf(paths, canonical), before, after: args.content }),
    };
  },
});

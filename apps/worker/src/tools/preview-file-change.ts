import { readFile } from 'node:fs/promises';
import { createReadDenial } from '@molf/permissions';
import {
  type FileChangePreview,
  type FileDiff,
  MAX_DIFF_FILE_BYTES,
  type PreviewFileChangeParams,
  toolDefinitions,
} from '@molf/protocol';
import { z } from 'zod';
import { type DiffLimits, diffFileChange, diffPathOf, isHidden } from './diff-file-change.ts';
import { applyEdits, type FileChangeContext, findEditTarget } from './edit-file.ts';
import { contentBeforeWrite, planWrite } from './write-file.ts';

/**
 * What a waiting edit_file or write_file call would change, computed as the tool would compute it
 * (its argument schema, its checks, its edit) against the file as it is now, and nothing written:
 * the diff, or a note with the tool's own refusal (`oldString was not found`…). A file the call's
 * read_file rules refuse is not shown. Never throws for a refusal; bounded like every diff.
 */
export async function previewFileChange(
  params: PreviewFileChangeParams,
  context: Pick<FileChangeContext, 'paths' | 'reads'> & { limits?: DiffLimits },
): Promise<FileChangePreview> {
  const { paths, reads } = context;
  const given = typeof params.args.path === 'string' ? params.args.path : '';
  const refused = (path: string, message: string): FileChangePreview => ({
    path,
    diff: '',
    truncated: false,
    note: `The call would fail: ${message}`.slice(0, 4_000),
  });
  const change = { paths, reads, sessionId: params.sessionId };
  const isReadDenied = params.readRules === undefined ? undefined : createReadDenial(params.readRules);
  const maxFileBytes = context.limits?.maxFileBytes ?? MAX_DIFF_FILE_BYTES;
  const withPath = (path: string, diff: FileDiff): FileChangePreview => ({ path, ...diff });

  if (params.tool === 'write_file') {
    const args = toolDefinitions.write_file.args.safeParse(params.args);
    if (!args.success) return refused(given, z.prettifyError(args.error));
    const plan = await planWrite(args.data, change);
    if (!plan.ok) return refused(given, plan.error.error ?? plan.error.output);
    const path = diffPathOf(paths, plan.value.canonical);
    const before = await contentBeforeWrite(plan.value, { paths, isReadDenied });
    return withPath(path, diffFileChange({ path, before, after: args.data.content, limits: context.limits }));
  }

  const args = toolDefinitions.edit_file.args.safeParse(params.args);
  if (!args.success) return refused(given, z.prettifyError(args.error));
  const target = await findEditTarget(args.data, change);
  if (!target.ok) return refused(given, target.error.error ?? target.error.output);
  const { canonical, stats } = target.value;
  const path = diffPathOf(paths, canonical);
  // Neither read nor edited in memory: the diff would show nothing, and the file could be huge.
  if (isHidden({ paths, canonical, isReadDenied })) {
    return withPath(path, diffFileChange({ path, before: { type: 'hidden' }, after: '' }));
  }
  if (stats.size > maxFileBytes) {
    return withPath(
      path,
      diffFileChange({ path, before: { type: 'too_large', bytes: stats.size }, after: '', limits: context.limits }),
    );
  }
  const edited = applyEdits(await readFile(canonical), args.data);
  if (!edited.ok) return refused(path, edited.error.error ?? edited.error.output);
  const { before, after } = edited.value;
  return withPath(
    path,
    diffFileChange({ path, before: { type: 'text', text: before }, after, limits: context.limits }),
  );
}

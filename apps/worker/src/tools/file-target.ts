import type { Stats } from 'node:fs';
import { stat } from 'node:fs/promises';
import { type ToolResult, toErrorResult } from '@molf/protocol';
import { type PathPolicy, resolveToolPath } from './resolve-tool-path.ts';

/**
 * Resolves a file tool's target path under the path policy and says what is there: a regular
 * file (with its stats), nothing, or a failure the model can read (outside the workdir, a
 * directory, something else, no permission).
 */
export async function resolveFileTarget(
  paths: PathPolicy,
  shownPath: string,
): Promise<{ ok: true; value: { canonical: string; stats: Stats | undefined } } | { ok: false; error: ToolResult }> {
  const resolved = await resolveToolPath(paths, shownPath);
  if (!resolved.ok) return resolved;
  const { canonical } = resolved.value;
  try {
    const info = await stat(canonical);
    if (info.isDirectory()) {
      return { ok: false, error: toErrorResult('not_regular_file', `${shownPath} is a directory, not a file.`) };
    }
    if (!info.isFile())
      return { ok: false, error: toErrorResult('not_regular_file', `${shownPath} is not a regular file.`) };
    return { ok: true, value: { canonical, stats: info } };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return { ok: true, value: { canonical, stats: undefined } };
    if (code === 'EACCES' || code === 'EPERM') {
      return { ok: false, error: toErrorResult('permission_denied', `Permission denied on ${shownPath}.`) };
    }
    throw error;
  }
}

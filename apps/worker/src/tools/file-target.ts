import type { Stats } from 'node:fs';
import { stat } from 'node:fs/promises';
import { type ToolResult, toErrorResult } from '@molf/protocol';

/**
 * What is at a tool's target path: a regular file (with its stats), nothing, or a failure the
 * model can read (a directory, something else, no permission).
 */
export async function inspectTarget(
  canonical: string,
  shownPath: string,
): Promise<{ ok: true; value: Stats | undefined } | { ok: false; error: ToolResult }> {
  try {
    const info = await stat(canonical);
    if (info.isDirectory()) {
      return { ok: false, error: toErrorResult('not_regular_file', `${shownPath} is a directory, not a file.`) };
    }
    if (!info.isFile())
      return { ok: false, error: toErrorResult('not_regular_file', `${shownPath} is not a regular file.`) };
    return { ok: true, value: info };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return { ok: true, value: undefined };
    if (code === 'EACCES' || code === 'EPERM') {
      return { ok: false, error: toErrorResult('permission_denied', `Permission denied on ${shownPath}.`) };
    }
    throw error;
  }
}

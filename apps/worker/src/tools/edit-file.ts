import type { Stats } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { type ToolResult, toErrorResult, toolDefinitions } from '@molf/protocol';
import writeFileAtomic from 'write-file-atomic';
import type { z } from 'zod';
import { diffFileChange, diffPathOf, isHidden } from './diff-file-change.ts';
import { resolveFileTarget } from './file-target.ts';
import { looksBinary } from './read-file.ts';
import { refuseWorkerStateWrite } from './refuse-worker-state-write.ts';
import { defineToolHandler, type ToolContext } from './tool-handler.ts';

type Edit = { oldString: string; newString: string; replaceAll?: boolean | undefined };

/** Where `needle` occurs in `text`, without overlaps. Literal: no pattern syntax at all. */
export function findOccurrences(text: string, needle: string): number[] {
  const found: number[] = [];
  for (let index = text.indexOf(needle); index !== -1; index = text.indexOf(needle, index + needle.length)) {
    found.push(index);
  }
  return found;
}

/**
 * Applies one edit to `text`, literally: `$&`, `$'` or `$$` in newString are written as they are,
 * unlike String.replace. A CRLF file is matched with LF strings turned into CRLF.
 */
export function applyEdit(
  text: string,
  edit: Edit,
  label: string,
): { ok: true; value: { text: string; count: number } } | { ok: false; error: ToolResult } {
  if (edit.oldString === '') {
    return {
      ok: false,
      error: toErrorResult('invalid_arguments', `${label}: oldString is empty; send the exact text to replace.`),
    };
  }
  if (edit.oldString === edit.newString) {
    return {
      ok: false,
      error: toErrorResult('invalid_arguments', `${label}: oldString and newString are identical; nothing to change.`),
    };
  }
  const crlf = text.includes('\r\n') && !edit.oldString.includes('\r');
  const oldString = crlf ? edit.oldString.replaceAll('\n', '\r\n') : edit.oldString;
  const newString = crlf ? edit.newString.replaceAll('\n', '\r\n') : edit.newString;
  const found = findOccurrences(text, oldString);
  if (found.length === 0) {
    return {
      ok: false,
      error: toErrorResult(
        'no_match',
        `${label}: oldString was not found. Read the file again and copy the exact text, including whitespace and indentation.`,
      ),
    };
  }
  if (found.length > 1 && edit.replaceAll !== true) {
    return {
      ok: false,
      error: toErrorResult(
        'multiple_matches',
        `${label}: oldString occurs ${found.length} times. Add surrounding lines to make it unique, or send replaceAll: true.`,
      ),
    };
  }
  let result = '';
  let from = 0;
  for (const index of found) {
    result += text.slice(from, index) + newString;
    from = index + oldString.length;
  }
  return { ok: true, value: { text: result + text.slice(from), count: found.length } };
}

type EditFileArgs = z.infer<typeof toolDefinitions.edit_file.args>;

/** What a change of a file is checked against: where paths may lead, and what the session has read. */
export type FileChangeContext = Pick<ToolContext, 'paths' | 'reads' | 'sessionId'>;

/**
 * The file an edit_file call changes, with every check the tool makes before reading it: confined
 * to the workdir and roots, not the worker's own state, existing, unchanged since the session read it.
 */
export async function findEditTarget(
  args: Pick<EditFileArgs, 'path'>,
  context: FileChangeContext,
): Promise<{ ok: true; value: { canonical: string; stats: Stats } } | { ok: false; error: ToolResult }> {
  const { paths, reads, sessionId } = context;
  const target = await resolveFileTarget(paths, args.path);
  if (!target.ok) return target;
  const { canonical, stats } = target.value;
  const intoWorkerState = await refuseWorkerStateWrite({ paths, canonical, shownPath: args.path });
  if (intoWorkerState !== undefined) return { ok: false, error: intoWorkerState };
  if (stats === undefined) {
    return { ok: false, error: toErrorResult('not_found', `No file at ${args.path}; create it with write_file.`) };
  }
  const refused = reads.checkBeforeChange(sessionId, canonical, args.path, stats);
  if (refused !== undefined) return { ok: false, error: refused };
  return { ok: true, value: { canonical, stats } };
}

/**
 * The edits of a call applied to a file's bytes in memory, all or nothing: the text before and
 * after, or the tool's refusal (binary, not UTF-8, a string not found or not unique). What the
 * tool writes and what a preview shows both come from here.
 */
export function applyEdits(
  content: Buffer,
  args: EditFileArgs,
):
  | { ok: true; value: { before: string; after: string; total: number; editCount: number } }
  | { ok: false; error: ToolResult } {
  if (looksBinary(content)) {
    return {
      ok: false,
      error: toErrorResult('binary', `${args.path} looks like a binary file; edit_file changes text only.`),
    };
  }
  const edits: Edit[] = args.edits ?? [
    { oldString: args.oldString as string, newString: args.newString as string, replaceAll: args.replaceAll },
  ];
  // Decoding strictly: a file that isn't valid UTF-8 would otherwise be written back with every
  // invalid byte replaced, corrupting it far from the edit.
  let before: string;
  try {
    before = new TextDecoder('utf-8', { fatal: true }).decode(content);
  } catch {
    return {
      ok: false,
      error: toErrorResult('binary', `${args.path} is not valid UTF-8 text; edit_file only changes UTF-8 files.`),
    };
  }
  // Every edit applies to the result of the one before; the file is written once.
  let text = before;
  let total = 0;
  for (const [index, edit] of edits.entries()) {
    const applied = applyEdit(text, edit, edits.length === 1 ? 'edit' : `edit ${index + 1} of ${edits.length}`);
    if (!applied.ok) {
      return {
        ok: false,
        error:
          edits.length === 1
            ? applied.error
            : { ...applied.error, error: `${applied.error.error} No edit was applied.` },
      };
    }
    text = applied.value.text;
    total += applied.value.count;
  }
  return { ok: true, value: { before, after: text, total, editCount: edits.length } };
}

export const editFileTool = defineToolHandler({
  definition: toolDefinitions.edit_file,
  async run(args, context) {
    const { paths, reads, sessionId } = context;
    const target = await findEditTarget(args, context);
    if (!target.ok) return target.error;
    const { canonical } = target.value;
    const edited = applyEdits(await readFile(canonical), args);
    if (!edited.ok) return edited.error;
    const { before, after, total, editCount } = edited.value;
    await writeFileAtomic(canonical, after);
    reads.remember(sessionId, canonical, await stat(canonical));
    const hidden = isHidden({ paths, canonical, isReadDenied: context.isReadDenied });
    return {
      output: `Edited ${args.path}: ${total} replacement${total === 1 ? '' : 's'}${
        editCount > 1 ? ` in ${editCount} edits` : ''
      }.`,
      meta: { truncated: false },
      diff: diffFileChange({
        path: diffPathOf(paths, canonical),
        before: hidden ? { type: 'hidden' } : { type: 'text', text: before },
        after,
      }),
    };
  },
});

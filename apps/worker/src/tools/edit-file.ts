import { readFile, stat } from 'node:fs/promises';
import { type ToolResult, toErrorResult, toolDefinitions } from '@molf/protocol';
import writeFileAtomic from 'write-file-atomic';
import { resolveFileTarget } from './file-target.ts';
import { looksBinary } from './read-file.ts';
import { refuseWorkerStateWrite } from './refuse-worker-state-write.ts';
import { defineToolHandler } from './tool-handler.ts';

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

export const editFileTool = defineToolHandler({
  definition: toolDefinitions.edit_file,
  async run(args, { paths, reads, sessionId }) {
    const target = await resolveFileTarget(paths, args.path);
    if (!target.ok) return target.error;
    const { canonical, stats } = target.value;
    const intoWorkerState = await refuseWorkerStateWrite({ paths, canonical, shownPath: args.path });
    if (intoWorkerState !== undefined) return intoWorkerState;
    if (stats === undefined) {
      return toErrorResult('not_found', `No file at ${args.path}; create it with write_file.`);
    }
    const refused = reads.checkBeforeChange(sessionId, canonical, args.path, stats);
    if (refused !== undefined) return refused;
    const content = await readFile(canonical);
    if (looksBinary(content)) {
      return toErrorResult('binary', `${args.path} looks like a binary file; edit_file changes text only.`);
    }

    const edits: Edit[] = args.edits ?? [
      { oldString: args.oldString as string, newString: args.newString as string, replaceAll: args.replaceAll },
    ];
    // All or nothing: every edit applies to the result of the one before; the file is written once.
    // Decoding strictly: a file that isn't valid UTF-8 would otherwise be written back with every
    // invalid byte replaced, corrupting it far from the edit.
    let text: string;
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(content);
    } catch {
      return toErrorResult('binary', `${args.path} is not valid UTF-8 text; edit_file only changes UTF-8 files.`);
    }
    const counts: number[] = [];
    for (const [index, edit] of edits.entries()) {
      const applied = applyEdit(text, edit, edits.length === 1 ? 'edit' : `edit ${index + 1} of ${edits.length}`);
      if (!applied.ok) {
        return edits.length === 1
          ? applied.error
          : { ...applied.error, error: `${applied.error.error} No edit was applied.` };
      }
      text = applied.value.text;
      counts.push(applied.value.count);
    }
    await writeFileAtomic(canonical, text);
    reads.remember(sessionId, canonical, await stat(canonical));
    const total = counts.reduce((sum, count) => sum + count, 0);
    return {
      output: `Edited ${args.path}: ${total} replacement${total === 1 ? '' : 's'}${
        edits.length > 1 ? ` in ${edits.length} edits` : ''
      }.`,
      meta: { truncated: false },
    };
  },
});

import { z } from 'zod';

/*
 * The change an `edit_file` or `write_file` call makes to a file, as a unified diff computed on the
 * worker against the file itself: shown to the person before an approval (`Approval.preview`) and
 * kept with the call's result (`ToolResult.diff`, the stored tool message, `tool-call.ended`).
 */

/** Lines of a diff kept; the rest is cut and `truncated` set. */
export const MAX_DIFF_LINES = 400;
/** A line of a diff longer than this is cut (a minified file's one line) and `truncated` set. */
export const MAX_DIFF_LINE_CHARS = 1_000;
/** Files larger than this (before or after the change) get a note instead of a diff. */
export const MAX_DIFF_FILE_BYTES = 1024 * 1024;
/** The longest diff text the schema takes: every kept line at its longest, plus the headers. */
const MAX_DIFF_CHARS = (MAX_DIFF_LINES + 4) * (MAX_DIFF_LINE_CHARS + 8) + 2 * 4_200;

export const FileDiffSchema = z.object({
  /**
   * A unified diff (`--- a/path`, `+++ b/path`, `@@` hunks; `--- /dev/null` for a new file), or
   * empty when there is none to show (the note says why) or the content does not change.
   */
  diff: z.string().max(MAX_DIFF_CHARS),
  /** Lines or a line's end were cut from `diff` (see the note). */
  truncated: z.boolean(),
  /**
   * Why the diff is missing or cut, in one sentence: a binary or too large file, lines left out,
   * a file the read_file rules keep from being shown, the tool's own refusal (a preview).
   */
  note: z.string().max(4_000).optional(),
});
export type FileDiff = z.infer<typeof FileDiffSchema>;

/** What a waiting `edit_file` or `write_file` call would change, computed before it runs. */
export const FileChangePreviewSchema = FileDiffSchema.extend({
  /** The file, relative to the workdir when inside it (as the diff's headers name it), else absolute. */
  path: z.string().max(4_096),
});
export type FileChangePreview = z.infer<typeof FileChangePreviewSchema>;

/** The tools whose calls change one file and carry a diff. */
export const FILE_CHANGE_TOOLS = ['edit_file', 'write_file'] as const;
export type FileChangeTool = (typeof FILE_CHANGE_TOOLS)[number];

export function isFileChangeTool(tool: string): tool is FileChangeTool {
  return (FILE_CHANGE_TOOLS as readonly string[]).includes(tool);
}

import { z } from 'zod';
import { FileDiffSchema } from './file-diff.ts';

/** Machine-readable failure kinds a tool result may carry in `meta.errorKind`. */
export const ToolErrorKindSchema = z.enum([
  'invalid_arguments',
  'not_found',
  'permission_denied',
  'too_large',
  'not_regular_file',
  'binary',
  'workdir_escape',
  'no_match',
  'multiple_matches',
  'already_exists',
  'stale_file',
  'read_required',
  'timeout',
  'cancelled',
  'tool_not_found',
  'worker_offline',
  'worker_restarted',
  'worker_not_found',
  /** The worker's OS sandbox refused what a command tried (a write outside the writable paths, the network while it is cut). */
  'sandbox_refused',
  'internal',
]);
export type ToolErrorKind = z.infer<typeof ToolErrorKindSchema>;

export const ToolResultMetaSchema = z.looseObject({
  truncated: z.boolean().optional(),
  outputId: z.string().optional(),
  outputPath: z.string().optional(),
  /** The full output's size in bytes, when it was saved to `outputPath`. */
  outputBytes: z.number().int().nonnegative().optional(),
  exitCode: z.number().int().optional(),
  errorKind: ToolErrorKindSchema.optional(),
});
export type ToolResultMeta = z.infer<typeof ToolResultMetaSchema>;

export const AttachmentSchema = z.object({
  mimeType: z.string().min(1),
  /** Path of the source file as the tool resolved it. */
  path: z.string().optional(),
  size: z.number().int().nonnegative(),
  /** The bytes, base64-encoded. */
  data: z.base64(),
});
export type Attachment = z.infer<typeof AttachmentSchema>;

/**
 * The envelope every tool call returns. A failure is a result with `error` set, never an
 * exception: the model reads it and decides what to try next.
 */
export const ToolResultSchema = z.object({
  output: z.string(),
  error: z.string().optional(),
  meta: ToolResultMetaSchema.optional(),
  attachments: z.array(AttachmentSchema).optional(),
  /**
   * What an edit_file or write_file call changed, as a unified diff of the file before and after
   * the write (for people: the model reads `output`). Absent for other tools and failed calls.
   */
  diff: FileDiffSchema.optional(),
});
export type ToolResult = z.infer<typeof ToolResultSchema>;

/** The failure for arguments a tool's schema refused, saying what was wrong in terms the model can fix. */
export function toInvalidArgumentsResult(toolName: string, error: z.ZodError): ToolResult {
  return toErrorResult(
    'invalid_arguments',
    `Invalid arguments for ${toolName}:\n${z.prettifyError(error)}\nSend arguments that match the tool's input schema.`,
  );
}

/** Builds a failure result with its machine-readable kind. */
export function toErrorResult(kind: ToolErrorKind, message: string): ToolResult {
  return { output: '', error: message, meta: { errorKind: kind } };
}

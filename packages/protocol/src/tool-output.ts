import { z } from 'zod';
import { type ToolCallId, ToolCallIdSchema } from './ids.ts';

/** Most bytes one page of a tool's full output carries (`sessions.toolOutput`'s `limit`). */
export const MAX_TOOL_OUTPUT_PAGE_BYTES = 1024 * 1024;
/** `limit` when a client names none. */
export const DEFAULT_TOOL_OUTPUT_PAGE_BYTES = 256 * 1024;

/** Where a worker saves a cut output, relative to its workdir: `.molf/tool-output/{id}.txt`. */
const SPILL_PATH = /^\.molf\/tool-output\/([A-Za-z0-9_-]{1,256})\.txt$/;

/** The id a spill file is named by, when `path` is one (`.molf/tool-output/{id}.txt`); undefined otherwise. */
export function toolOutputIdOf(path: string): ToolCallId | undefined {
  const id = SPILL_PATH.exec(path)?.[1];
  return id === undefined ? undefined : ToolCallIdSchema.parse(id);
}

/** Where the whole text of a cut tool output is kept on the worker, as its result said. */
export const ToolFullOutputSchema = z.object({
  /** Relative to the workdir: `.molf/tool-output/{id}.txt`. */
  path: z.string().max(4_096),
  /** Its size, when the tool said. */
  bytes: z.number().int().nonnegative().optional(),
});
export type ToolFullOutput = z.infer<typeof ToolFullOutputSchema>;

const pageBytes = z.number().int().min(1).max(MAX_TOOL_OUTPUT_PAGE_BYTES);

/** One page of a spill file to read: bytes from `offset`, at most `limit`. */
export const ToolOutputRangeSchema = z.object({
  /** Byte offset; one inside a character starts at the next whole one. Default 0. */
  offset: z.number().int().min(0).default(0),
  /** Default DEFAULT_TOOL_OUTPUT_PAGE_BYTES, at most MAX_TOOL_OUTPUT_PAGE_BYTES. */
  limit: pageBytes.default(DEFAULT_TOOL_OUTPUT_PAGE_BYTES),
});

/**
 * A page of a tool's full output, cut on character boundaries: the next page starts at
 * `offset + bytes` (a page holds at least one whole character, so it may pass `limit` by up to 3 bytes).
 */
export const ToolOutputPageSchema = z.object({
  text: z.string().max(MAX_TOOL_OUTPUT_PAGE_BYTES + 4),
  /** Where the page starts, in bytes (the asked offset, moved to a character boundary). */
  offset: z.number().int().nonnegative(),
  /** The page's length in bytes. */
  bytes: z.number().int().nonnegative(),
  /** The whole file's size in bytes. */
  totalBytes: z.number().int().nonnegative(),
  /** Whether the page reaches the end of the file. */
  done: z.boolean(),
});
export type ToolOutputPage = z.infer<typeof ToolOutputPageSchema>;

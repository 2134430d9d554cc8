import { z } from 'zod';

/** A worker's persistent identity, stored in `{workdir}/.molf/worker.json`. */
export const WorkerIdSchema = z.uuid().brand<'WorkerId'>();
export type WorkerId = z.infer<typeof WorkerIdSchema>;

/**
 * A tool call's id. It names the spill file `{workdir}/.molf/tool-output/{id}.txt`, so it is
 * restricted to characters that are safe in a file name.
 */
export const ToolCallIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,256}$/, 'a tool call id is 1–256 characters of A–Z, a–z, 0–9, _ or -')
  .brand<'ToolCallId'>();
export type ToolCallId = z.infer<typeof ToolCallIdSchema>;

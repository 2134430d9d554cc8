import { z } from 'zod';
import { WorkerIdSchema } from './ids.ts';

/** Largest definition of one MCP server a worker may send, as JSON. */
const MAX_DEFINITION_CHARS = 64 * 1024;

/**
 * A worker asks whether it may start a server that is new or changed in its `.mcp.json`. The
 * server answers once the approval gate decides: at once by rule, or when a person answers.
 */
export const McpServerApprovalInputSchema = z.object({
  workerId: WorkerIdSchema,
  name: z.string().min(1).max(256),
  /** The definition as written in `.mcp.json` (defaults filled in, `${VAR}` not interpolated). */
  definition: z
    .record(z.string(), z.unknown())
    .refine((definition) => JSON.stringify(definition).length <= MAX_DEFINITION_CHARS, {
      message: `the definition is longer than ${MAX_DEFINITION_CHARS} characters`,
    }),
});
export type McpServerApprovalInput = z.infer<typeof McpServerApprovalInputSchema>;

export const McpServerApprovalAnswerSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('allow') }),
  /** A person or a rule refused: the server stays stopped until its definition changes. */
  z.object({ type: z.literal('deny'), message: z.string() }),
  /**
   * Nobody decided (the worker was offline when it asked or went offline meanwhile, the server is
   * stopping): ask again after the next registration.
   */
  z.object({ type: z.literal('retry'), message: z.string() }),
]);
export type McpServerApprovalAnswer = z.infer<typeof McpServerApprovalAnswerSchema>;

/** The worker no longer needs an answer (the server was removed or changed while it waited). */
export const McpServerApprovalWithdrawInputSchema = McpServerApprovalInputSchema;

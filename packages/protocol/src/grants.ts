import { z } from 'zod';
import { PermissionsProblemSchema } from './approvals.ts';
import { WorkerIdSchema } from './ids.ts';

/**
 * A grant id as the server makes it (`g_` and hex digits) or a person writes it in the file: the
 * same rule as `GRANT_ID_PATTERN` of @molf/permissions, which reads the file.
 */
export const GrantIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,64}$/, 'a grant id is 1 to 64 letters, digits, "_" or "-"');

/**
 * A rule of a worker's `permissions.jsonc` that carries a grant id (saved by an "always" answer, or
 * given one by hand), with what the audit log says about how it was given. The audit fields are
 * absent when no record of it is known: a rule written by hand, or an answer older than what the
 * server keeps in memory.
 */
export const GrantSchema = z.object({
  grantId: GrantIdSchema,
  workerId: WorkerIdSchema,
  tool: z.string(),
  pattern: z.string(),
  /** `allow` for every grant an answer saved; a hand-written rule may say otherwise. */
  action: z.enum(['allow', 'deny', 'ask']),
  /** Where the rule stands in the file (from 1). */
  line: z.number().int(),
  /** When the rule stops applying (ISO 8601, UTC); absent: never. */
  expiresAt: z.string().optional(),
  /** Past `expiresAt`: the rule no longer applies, but stays in the file until revoked. */
  expired: z.boolean(),
  /** When the answer that saved it was given (ISO 8601). */
  givenAt: z.string().optional(),
  /** The client credential that answered, with its label when the server still has it. */
  givenBy: z.object({ credentialId: z.string(), label: z.string().optional() }).optional(),
  /** The program that answered (`molf-cli/0.1.0`), as its connection said. */
  client: z.string().optional(),
  connectionId: z.string().optional(),
  approvalId: z.string().optional(),
  sessionId: z.string().optional(),
  toolCallId: z.string().optional(),
  /** What the approved call was: its subjects (commands, paths, names); empty when not known. */
  subjects: z.array(z.string()),
});
export type Grant = z.infer<typeof GrantSchema>;

export const PermissionsGrantsInputSchema = z.object({ workerId: WorkerIdSchema });

export const PermissionsGrantsSchema = z.object({
  workerId: WorkerIdSchema,
  /** The worker's `permissions.jsonc`. */
  path: z.string(),
  /** In file order. */
  grants: z.array(GrantSchema),
  /** Set when the file on disk does not parse: the grants are then those of the last good rules. */
  problem: PermissionsProblemSchema.optional(),
});
export type PermissionsGrants = z.infer<typeof PermissionsGrantsSchema>;

export const PermissionsRevokeInputSchema = z.object({ workerId: WorkerIdSchema, grantId: GrantIdSchema });

/** The rule a revoke removed from the file. */
export const PermissionsRevokeResultSchema = z.object({
  grantId: GrantIdSchema,
  tool: z.string(),
  pattern: z.string(),
});
export type PermissionsRevokeResult = z.infer<typeof PermissionsRevokeResultSchema>;

import { z } from 'zod';

/**
 * A credential's role. A client credential drives sessions; a worker credential registers
 * workers and posts tool results. Neither can do the other's work.
 */
export const RoleSchema = z.enum(['client', 'worker']);
export type Role = z.infer<typeof RoleSchema>;

/** Sent by the tRPC client as connection params, never in the URL. */
export const ConnectionParamsSchema = z.object({
  token: z.string().min(1).max(512),
});
export type ConnectionParams = z.infer<typeof ConnectionParamsSchema>;

/** Tokens carry their role in a prefix so a wrong paste gets a clear error. */
export const TOKEN_PREFIX: Record<Role, string> = { client: 'molf_c_', worker: 'molf_w_' };

/** Matches any Molf token, for redaction in logs. */
export const TOKEN_PATTERN = /molf_[cw]_[A-Za-z0-9_-]{16,}/g;

export const WhoAmISchema = z.object({
  role: RoleSchema,
  serverVersion: z.string(),
});
export type WhoAmI = z.infer<typeof WhoAmISchema>;

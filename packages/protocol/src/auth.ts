import { z } from 'zod';

/**
 * A credential's role. A client credential drives sessions; a worker credential registers
 * workers and posts tool results. Neither can do the other's work.
 */
export const RoleSchema = z.enum(['client', 'worker']);
export type Role = z.infer<typeof RoleSchema>;

/** A client program's name and version (`molf-cli/0.1.0`): printable, no control characters. */
export const ClientNameSchema = z
  .string()
  .min(1)
  .max(100)
  .regex(/^[^\p{C}]+$/u, 'a client name may not hold control or invisible format characters');

/** Sent by the tRPC client as connection params, never in the URL. */
export const ConnectionParamsSchema = z.object({
  token: z.string().min(1).max(512),
  /**
   * Which program connects (`molf-cli/0.1.0`, `molf-web/0.1.0`), kept with the answers this
   * connection gives in the audit log and shown with grants. Default: not said.
   */
  client: ClientNameSchema.optional(),
});
export type ConnectionParams = z.infer<typeof ConnectionParamsSchema>;

export { formatToken, TOKEN_PATTERN, TOKEN_PREFIX } from './token-format.ts';

export const WhoAmISchema = z.object({
  role: RoleSchema,
  serverVersion: z.string(),
});
export type WhoAmI = z.infer<typeof WhoAmISchema>;

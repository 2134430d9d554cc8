import { z } from 'zod';

/**
 * A credential's kind. A client credential is a person's program (CLI, web); a worker credential
 * registers workers and posts tool results. Neither can do the other's work. The kind shows in the
 * token's prefix.
 */
export const KindSchema = z.enum(['client', 'worker']);
export type Kind = z.infer<typeof KindSchema>;

/**
 * What a client credential may do, each level including the one below: `viewer` reads sessions
 * and their events; `operator` also drives sessions and answers approvals; `admin` also edits
 * rules, saves "always" answers, mints, pairs and revokes credentials.
 */
export const ClientRoleSchema = z.enum(['viewer', 'operator', 'admin']);
export type ClientRole = z.infer<typeof ClientRoleSchema>;

/** A credential's role: one of the client roles, or `worker`. */
export const RoleSchema = z.enum(['viewer', 'operator', 'admin', 'worker']);
export type Role = z.infer<typeof RoleSchema>;

/** The kind of credential a role belongs to. */
export function kindOf(role: Role): Kind {
  return role === 'worker' ? 'worker' : 'client';
}

const CLIENT_ROLE_LEVEL: Record<ClientRole, number> = { viewer: 0, operator: 1, admin: 2 };

/** Whether a credential with `role` may do what `needed` may: a client role at that level or above. */
export function roleAllows(role: Role, needed: ClientRole): boolean {
  return role !== 'worker' && CLIENT_ROLE_LEVEL[role] >= CLIENT_ROLE_LEVEL[needed];
}

/** The role as a sentence names it: `a viewer`, `an operator`, `an admin`, `a worker`. */
export function roleWithArticle(role: Role): string {
  return `${role === 'operator' || role === 'admin' ? 'an' : 'a'} ${role}`;
}

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
  /** The credential's name (`laptop`, `ci`), as `molf token list` shows it. */
  name: z.string().optional(),
  /** The credential's id, for `molf token revoke`. */
  credentialId: z.string().optional(),
  serverVersion: z.string(),
});
export type WhoAmI = z.infer<typeof WhoAmISchema>;

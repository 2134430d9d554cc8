import { z } from 'zod';
import { KindSchema, RoleSchema } from './auth.ts';

/** The longest credential name, in UTF-16 code units (JavaScript's `length`). */
export const MAX_CREDENTIAL_NAME_LENGTH = 64;

/**
 * A credential's name (`laptop`, `build-box`), as `molf token list` shows it: 1 to 64 characters,
 * none of them control or invisible format characters (a name is printed on terminals).
 */
export const CredentialNameSchema = z
  .string()
  .min(1, 'a name needs at least one character')
  .max(MAX_CREDENTIAL_NAME_LENGTH, `a name has at most ${MAX_CREDENTIAL_NAME_LENGTH} characters`)
  .regex(/^[^\p{C}]+$/u, 'a name may not hold control or invisible format characters');

/**
 * How a credential came to be: `created` by `molf token create` or `tokens.create`, `paired` by
 * redeeming a pairing code, `generated` by the server at its first start (`molf up`).
 */
export const CredentialOriginSchema = z.enum(['created', 'paired', 'generated']);
export type CredentialOrigin = z.infer<typeof CredentialOriginSchema>;

/** A stored credential as an admin sees it: never its token. */
export const CredentialInfoSchema = z.object({
  id: z.string(),
  role: RoleSchema,
  name: z.string(),
  /** ISO 8601. */
  createdAt: z.string(),
  /** When it last authenticated a connection (ISO 8601); absent when not known. */
  lastUsedAt: z.string().optional(),
  origin: CredentialOriginSchema,
  /** Whether the connection asking uses this credential. */
  current: z.boolean(),
});
export type CredentialInfo = z.infer<typeof CredentialInfoSchema>;

export const TokensCreateInputSchema = z.object({ role: RoleSchema, name: CredentialNameSchema });
export type TokensCreateInput = z.infer<typeof TokensCreateInputSchema>;

/** A new credential and its token, which is shown this once and never stored. */
export const TokensCreateOutputSchema = z.object({ token: z.string(), credential: CredentialInfoSchema });
export type TokensCreateOutput = z.infer<typeof TokensCreateOutputSchema>;

export const CredentialIdInputSchema = z.object({ id: z.string().min(1).max(64) });

export const TokensRevokeOutputSchema = z.object({ revoked: z.literal(true) });

export const PairingCreateInputSchema = z.object({
  /** What the credential made from the code may do. */
  role: RoleSchema,
  /** The name of the credential the code becomes. Default: the name the redeemer gives. */
  name: CredentialNameSchema.optional(),
});
export type PairingCreateInput = z.infer<typeof PairingCreateInputSchema>;

/** A live pairing code as it is listed: never the code itself, which only its maker saw. */
export const PairingCodeInfoSchema = z.object({
  /** For `pairing.cancel`. */
  id: z.string(),
  role: RoleSchema,
  name: z.string().optional(),
  /** ISO 8601. */
  createdAt: z.string(),
  /** ISO 8601. */
  expiresAt: z.string(),
});
export type PairingCodeInfo = z.infer<typeof PairingCodeInfoSchema>;

/** A new pairing code, shown this once: `XXXX-XXXX`, 8 symbols of Crockford's base32. */
export const PairingCreateOutputSchema = PairingCodeInfoSchema.extend({ code: z.string() });
export type PairingCreateOutput = z.infer<typeof PairingCreateOutputSchema>;

export const PairingCancelOutputSchema = z.object({ cancelled: z.literal(true) });

/** The body of `POST /api/pair`, at most 4 KiB of JSON. */
export const PairRequestSchema = z.object({
  /** As typed: case, spaces and dashes do not matter, I and L read as 1, O as 0. */
  code: z.string().min(1, 'the code is empty').max(64, 'a pairing code is 8 symbols (XXXX-XXXX)'),
  /** What redeems the code: a worker, or a person's client (CLI, web). */
  kind: KindSchema,
  /** The credential's name, unless the code carries one. */
  name: CredentialNameSchema,
});
export type PairRequest = z.infer<typeof PairRequestSchema>;

/** What `POST /api/pair` answers with 200: the credential's token, shown this once. */
export const PairResponseSchema = z.object({
  token: z.string(),
  role: RoleSchema,
  credentialId: z.string(),
  name: z.string(),
});
export type PairResponse = z.infer<typeof PairResponseSchema>;

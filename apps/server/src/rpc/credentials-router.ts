import {
  CredentialIdInputSchema,
  CredentialInfoSchema,
  MolfError,
  PairingCancelOutputSchema,
  PairingCodeInfoSchema,
  PairingCreateInputSchema,
  PairingCreateOutputSchema,
  TokensCreateInputSchema,
  TokensCreateOutputSchema,
  TokensRevokeOutputSchema,
} from '@molf/protocol';
import { z } from 'zod';
import { toCredentialInfo } from '../auth/credential-store.ts';
import type { RouterServices } from './router-services.ts';
import { adminProcedure, router } from './trpc.ts';

/**
 * The admin's credential procedures: `tokens` (list, create, revoke the stored credentials) and
 * `pairing` (one-time codes that a worker or a person's client trades for a credential at
 * `POST /api/pair`). Revoking closes the credential's live sockets (the connection guard watches
 * the file).
 */
export function createCredentialRouters(services: Pick<RouterServices, 'credentials' | 'pairing'>) {
  const { credentials, pairing } = services;
  return {
    tokens: router({
      /** Every stored credential, never a token; fixed tokens from the server's configuration are not stored. */
      list: adminProcedure
        .output(z.array(CredentialInfoSchema))
        .query(({ ctx }) => credentials.list().map((credential) => toCredentialInfo(credential, ctx.credentialId))),
      /** A new credential; its token is in this answer only. */
      create: adminProcedure
        .input(TokensCreateInputSchema)
        .output(TokensCreateOutputSchema)
        .mutation(async ({ input, ctx }) => {
          const { token, credential } = await credentials.create({ role: input.role, label: input.name });
          return { token, credential: toCredentialInfo(credential, ctx.credentialId) };
        }),
      revoke: adminProcedure
        .input(CredentialIdInputSchema)
        .output(TokensRevokeOutputSchema)
        .mutation(async ({ input }) => {
          if (credentials.isFixed(input.id)) {
            throw new MolfError(
              'invalid_input',
              `${input.id} is a token from the server's configuration (flag or environment): change that and restart to revoke it`,
              { field: 'id' },
            );
          }
          if (!(await credentials.revoke(input.id))) {
            throw new MolfError('not_found', `no credential with id ${input.id} (molf token list shows them)`, {
              field: 'id',
            });
          }
          return { revoked: true as const };
        }),
    }),
    pairing: router({
      /** A one-time code for `role`, live for 5 minutes; `busy` when 5 are live already. */
      create: adminProcedure
        .input(PairingCreateInputSchema)
        .output(PairingCreateOutputSchema)
        .mutation(({ input }) => pairing.create(input)),
      /** The live codes: never the codes themselves. */
      list: adminProcedure.output(z.array(PairingCodeInfoSchema)).query(() => pairing.list()),
      cancel: adminProcedure
        .input(CredentialIdInputSchema)
        .output(PairingCancelOutputSchema)
        .mutation(async ({ input }) => {
          if (!(await pairing.cancel(input.id))) {
            throw new MolfError('not_found', `no live pairing code with id ${input.id} (molf pair list shows them)`, {
              field: 'id',
            });
          }
          return { cancelled: true as const };
        }),
    }),
  };
}

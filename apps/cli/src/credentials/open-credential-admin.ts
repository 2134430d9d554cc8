import { createSilentLogger } from '@molf/logging';
import type {
  CredentialInfo,
  PairingCodeInfo,
  PairingCreateInput,
  PairingCreateOutput,
  TokensCreateInput,
  TokensCreateOutput,
} from '@molf/protocol';
import { MolfError } from '@molf/protocol';
import {
  openCredentialStore,
  openDatabase,
  openFileStateDocuments,
  openPairingCodeStore,
  openPostgresStateDocuments,
  type StateDocuments,
  toCredentialInfo,
} from '@molf/server';
import { connectClient } from '../connect-client.ts';
import { currentMolfPaths } from '../current-molf-paths.ts';
import { type ClientConnectionOptions, resolveClientConnection } from '../resolve-client-connection.ts';

/**
 * A server's credentials and pairing codes, managed either in its data directory on this machine
 * (`molf token`, `molf pair` where the server runs: the files are shared with the running server,
 * under a lock) or through a running server by an admin client (`--server`).
 */
export type CredentialAdmin = AsyncDisposable & {
  /** Where the changes go: the data directory, the servers' database (named without its password), or the server's URL. */
  where: { type: 'local'; dataDir: string } | { type: 'database'; name: string } | { type: 'remote'; url: string };
  listTokens(): Promise<CredentialInfo[]>;
  createToken(input: TokensCreateInput): Promise<TokensCreateOutput>;
  /** Fails with `not_found` for an unknown id. */
  revokeToken(id: string): Promise<void>;
  createCode(input: PairingCreateInput): Promise<PairingCreateOutput>;
  listCodes(): Promise<PairingCodeInfo[]>;
  /** Fails with `not_found` when no live code has that id. */
  cancelCode(id: string): Promise<void>;
};

export type CredentialAdminOptions = ClientConnectionOptions & { dataDir?: string; database?: string };

/**
 * Remote when `server` is given (flag or `MOLF_SERVER_URL`); else the database of servers started
 * with one (`database`, flag or `MOLF_DATABASE_URL`); else the local data directory.
 */
export async function openCredentialAdmin(options: CredentialAdminOptions): Promise<CredentialAdmin> {
  if (options.server !== undefined) return openRemote(options);
  if (options.database !== undefined) {
    const logger = createSilentLogger();
    // As a server does: an empty database gets the schema, an older or newer one is refused.
    const database = await openDatabase({ url: options.database, logger });
    try {
      const documents = await openPostgresStateDocuments({ database, logger });
      return openOver(documents, { type: 'database', name: database.name }, async () => {
        await documents.close();
        await database.close();
      });
    } catch (error) {
      await database.close();
      throw error;
    }
  }
  const { dataDir } = currentMolfPaths(options);
  const documents = openFileStateDocuments({ dataDir });
  return openOver(documents, { type: 'local', dataDir }, () => documents.close());
}

/** The credential and pairing stores over the state documents of a data directory or a database. */
function openOver(
  documents: StateDocuments,
  where: CredentialAdmin['where'],
  close: () => Promise<void>,
): CredentialAdmin {
  const credentials = openCredentialStore({ documents });
  const pairing = openPairingCodeStore({ documents, credentials });
  return {
    where,
    listTokens: async () => credentials.list().map((credential) => toCredentialInfo(credential)),
    async createToken({ role, name }) {
      const { token, credential } = await credentials.create({ role, label: name });
      return { token, credential: toCredentialInfo(credential) };
    },
    async revokeToken(id) {
      if (!(await credentials.revoke(id))) {
        throw new MolfError('not_found', `no credential with id ${id} in ${credentials.where}`);
      }
    },
    createCode: (input) => pairing.create(input),
    listCodes: () => pairing.list(),
    async cancelCode(id) {
      if (!(await pairing.cancel(id))) throw new MolfError('not_found', `no live pairing code with id ${id}`);
    },
    [Symbol.asyncDispose]: close,
  };
}

async function openRemote(options: ClientConnectionOptions): Promise<CredentialAdmin> {
  const connection = await resolveClientConnection(options);
  const client = await connectClient(connection);
  const { rpc } = client;
  return {
    where: { type: 'remote', url: connection.url },
    listTokens: () => rpc.tokens.list.query(),
    createToken: (input) => rpc.tokens.create.mutate(input),
    async revokeToken(id) {
      await rpc.tokens.revoke.mutate({ id });
    },
    createCode: (input) => rpc.pairing.create.mutate(input),
    listCodes: () => rpc.pairing.list.query(),
    async cancelCode(id) {
      await rpc.pairing.cancel.mutate({ id });
    },
    [Symbol.asyncDispose]: () => client.close(),
  };
}

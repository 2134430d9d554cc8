import { randomUUID } from 'node:crypto';
import type { Logger } from '@molf/logging';
import {
  type CredentialInfo,
  type CredentialOrigin,
  CredentialOriginSchema,
  type Kind,
  kindOf,
  MolfError,
  type Role,
  RoleSchema,
} from '@molf/protocol';
import { z } from 'zod';
import type { StateDocuments } from '../state/index.ts';
import { createCredentialUsage } from './credential-usage.ts';
import { generateToken, hashesEqual, hashToken } from './tokens.ts';

const StoredCredentialSchema = z.object({
  id: z.string().min(1),
  role: RoleSchema,
  label: z.string(),
  /** SHA-256 of the token, hex. */
  hash: z.string().regex(/^[0-9a-f]{64}$/),
  createdAt: z.string(),
  /** How it was made; absent in files written before it was recorded (see {@link credentialOrigin}). */
  origin: CredentialOriginSchema.optional(),
});
export type StoredCredential = z.infer<typeof StoredCredentialSchema>;

const CredentialsFileSchema = z.union([
  z.object({ version: z.literal(2), credentials: z.array(StoredCredentialSchema) }),
  // Version 1 knew one client role, which could do everything: such a credential is an admin.
  z
    .object({
      version: z.literal(1),
      credentials: z.array(StoredCredentialSchema.extend({ role: z.enum(['client', 'worker']) })),
    })
    .transform(({ credentials }) => ({
      version: 2 as const,
      credentials: credentials.map((credential) => ({
        ...credential,
        role: credential.role === 'client' ? ('admin' as const) : credential.role,
      })),
    })),
]);

export type Verified = { role: Role; credentialId: string };

/** A stored credential as listed: with when it last authenticated, where known (ISO 8601). */
export type ListedCredential = StoredCredential & { lastUsedAt?: string };

export const CREDENTIALS_FILE = 'credentials.json';

/** The label `molf up`'s first start gives the tokens it generates (what older files recorded). */
export const GENERATED_LABEL = 'generated at first start';

/**
 * A stored credential as clients see it (`tokens.list`, `molf token list`): never its hash.
 * `currentId` is the credential of whoever asks, to mark their own.
 */
export function toCredentialInfo(credential: ListedCredential, currentId?: string): CredentialInfo {
  return {
    id: credential.id,
    role: credential.role,
    name: credential.label,
    createdAt: credential.createdAt,
    ...(credential.lastUsedAt === undefined ? {} : { lastUsedAt: credential.lastUsedAt }),
    origin: credentialOrigin(credential),
    current: credential.id === currentId,
  };
}

/** How a credential was made; one stored before that was recorded is `generated` if its label says so. */
export function credentialOrigin(credential: StoredCredential): CredentialOrigin {
  return credential.origin ?? (credential.label === GENERATED_LABEL ? 'generated' : 'created');
}

/**
 * Credentials of one server: hashes in the `credentials.json` document (a 0600 file in the data
 * directory, or a row shared by every instance on the database), plus fixed tokens given by flag
 * or env, which live only in memory (a fixed client token is an admin). The document is read again
 * when it changes, so `molf token create|revoke` (or another instance) takes effect on the next
 * connection without a restart.
 */
export type CredentialStore = {
  /**
   * The credential a token belongs to, by the credentials as this process knows them (on
   * PostgreSQL, another instance's new credential shows a moment later: see `verifyLatest`); a
   * stored one's use is noted (see `recordUsage`). Throws `config_invalid` while the document is damaged.
   */
  verify(token: string): Verified | undefined;
  /**
   * As `verify`, but reads the credentials now: for a token `verify` does not know, which another
   * instance may have created a moment ago.
   */
  verifyLatest(token: string): Promise<Verified | undefined>;
  /** The stored credentials, with when each last authenticated where known. */
  list(): ListedCredential[];
  /**
   * Stores a new credential and returns its token, which exists nowhere else. Safe against other
   * processes and instances changing the credentials at the same time (under the document's lock).
   */
  create(options: {
    role: Role;
    label: string;
    /** Default `created`. */
    origin?: CredentialOrigin;
    /** The new credential's id, when the caller must know it before (pairing). Default: a random one. */
    id?: string;
  }): Promise<{ token: string; credential: StoredCredential }>;
  revoke(id: string): Promise<boolean>;
  /** Whether a credential of this kind is stored. */
  hasStored(kind: Kind): boolean;
  /** Whether a credential a connection authenticated with still exists; false if the document is damaged. */
  isActive(credentialId: string): boolean;
  /** Whether a credential is a fixed token from the server's own configuration. */
  isFixed(credentialId: string): boolean;
  /**
   * Notes that a stored credential is in use now (a connection it opened is still live), so that a
   * worker connected for weeks is not shown as last used weeks ago. Cheap: memory only.
   */
  markInUse(credentialId: string): void;
  /**
   * Calls `onChange` after the credentials changed (here, in another process or on another
   * instance); returns the function that stops watching.
   */
  watch(onChange: () => void): () => void;
  /** Where the credentials are, for messages: the file's path, or the database. */
  where: string;
  /**
   * The credentials file, which the connection guard polls for revocations.
   * @deprecated A file only the file backend has: use `watch`, which sees every backend's changes.
   */
  path: string;
  /** Writes the last-used times not yet written. */
  close(): Promise<void>;
};

export function openCredentialStore(options: {
  /** Where `credentials.json` and `credential-usage.json` are kept. */
  documents: StateDocuments;
  fixed?: Partial<Record<Kind, string>>;
  /**
   * Whether this process keeps `credential-usage.json` (when each credential last authenticated):
   * the server does; `molf token` only reads it. Default false.
   */
  recordUsage?: boolean;
  /** Default `Date.now`. */
  now?: () => number;
  /** Where a failed write of the usage document is told. Default: nowhere. */
  logger?: Logger;
}): CredentialStore {
  const { documents } = options;
  const where = documents.where(CREDENTIALS_FILE);
  const now = options.now ?? Date.now;
  const fixed = Object.entries(options.fixed ?? {}).flatMap(([kind, token]) =>
    token === undefined
      ? []
      : [{ role: (kind === 'worker' ? 'worker' : 'admin') as Role, id: `fixed-${kind}`, hash: hashToken(token) }],
  );
  /** The credentials as last parsed, and the version of the document they came from. */
  let stored: StoredCredential[] = [];
  let parsedVersion: string | undefined;

  /** The credentials as this process knows them, parsed again only when the document changed. */
  function current(): StoredCredential[] {
    const known = documents.known(CREDENTIALS_FILE);
    if (known.version !== parsedVersion) {
      stored = parseCredentials(where, known.text);
      parsedVersion = known.version;
    }
    return stored;
  }

  /** The credentials read now, for a change made under the lock. */
  async function latest(): Promise<StoredCredential[]> {
    return parseCredentials(where, await documents.read(CREDENTIALS_FILE));
  }

  async function save(credentials: StoredCredential[]): Promise<void> {
    await documents.write(CREDENTIALS_FILE, `${JSON.stringify({ version: 2, credentials }, null, 2)}\n`);
  }

  function findStored(credentials: StoredCredential[], token: string): Verified | undefined {
    const hash = hashToken(token);
    const match = credentials.find((credential) => hashesEqual(credential.hash, hash));
    if (match === undefined) return undefined;
    usage.record(match.id);
    return { role: match.role, credentialId: match.id };
  }

  function findFixed(token: string): Verified | undefined {
    const hash = hashToken(token);
    const match = fixed.find((credential) => hashesEqual(credential.hash, hash));
    return match === undefined ? undefined : { role: match.role, credentialId: match.id };
  }

  const usage = createCredentialUsage({
    documents,
    now,
    known: () => new Set(stored.map((credential) => credential.id)),
    writes: options.recordUsage === true,
    ...(options.logger === undefined ? {} : { logger: options.logger }),
  });

  current();
  // A minted token given as the fixed one would never be revocable and could claim any worker id.
  for (const credential of fixed) {
    if (stored.some((candidate) => hashesEqual(candidate.hash, credential.hash))) {
      throw new MolfError(
        'config_invalid',
        `the fixed ${kindOf(credential.role)} token is a token stored in ${where} (made with \`molf token create\`); ` +
          'give the server a token of its own, or none',
      );
    }
  }

  return {
    verify(token) {
      // Fixed tokens don't depend on the document, so a damaged one can't lock out `molf up`.
      return findFixed(token) ?? findStored(current(), token);
    },
    async verifyLatest(token) {
      return findFixed(token) ?? findStored(await latest(), token);
    },
    list() {
      const credentials = current();
      const lastUsed = usage.read();
      return credentials.map((credential) => {
        const ms = lastUsed.get(credential.id);
        return ms === undefined ? { ...credential } : { ...credential, lastUsedAt: new Date(ms).toISOString() };
      });
    },
    async create({ role, label, origin = 'created', id }) {
      return documents.lock(CREDENTIALS_FILE, async () => {
        const credentials = await latest();
        const token = generateToken(role);
        const credential: StoredCredential = {
          id: id ?? randomUUID().slice(0, 8),
          role,
          label,
          hash: hashToken(token),
          createdAt: new Date(now()).toISOString(),
          origin,
        };
        if (credentials.some((candidate) => candidate.id === credential.id)) {
          throw new MolfError('conflict', `a credential with id ${credential.id} exists already in ${where}`);
        }
        await save([...credentials, credential]);
        return { token, credential };
      });
    },
    async revoke(id) {
      // Read now, not as known: the credential may have been made on another instance a moment
      // ago. Nothing to take the lock for when it is not there (the data directory may not even exist).
      if (!(await latest()).some((credential) => credential.id === id)) return false;
      return documents.lock(CREDENTIALS_FILE, async () => {
        const credentials = await latest();
        const remaining = credentials.filter((credential) => credential.id !== id);
        if (remaining.length === credentials.length) return false;
        await save(remaining);
        return true;
      });
    },
    hasStored(kind) {
      return current().some((credential) => kindOf(credential.role) === kind);
    },
    isActive(credentialId) {
      if (fixed.some((credential) => credential.id === credentialId)) return true;
      try {
        return current().some((credential) => credential.id === credentialId);
      } catch {
        return false;
      }
    },
    markInUse(credentialId) {
      if (stored.some((credential) => credential.id === credentialId)) usage.record(credentialId);
    },
    isFixed(credentialId) {
      return fixed.some((credential) => credential.id === credentialId);
    },
    watch: (onChange) => documents.watch(CREDENTIALS_FILE, onChange),
    where,
    path: where,
    close: () => usage.close(),
  };
}

/**
 * The credentials a document holds (none when there is no document). A damaged one throws
 * `config_invalid` naming `where`: refuse everything rather than guess, since a broken
 * credentials document must never let anyone in.
 */
function parseCredentials(where: string, text: string | undefined): StoredCredential[] {
  if (text === undefined) return [];
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new MolfError('config_invalid', `${where} is not valid JSON: ${(error as Error).message}`, { cause: error });
  }
  const parsed = CredentialsFileSchema.safeParse(json);
  if (!parsed.success) {
    throw new MolfError('config_invalid', `${where} is not a valid credentials file: ${z.prettifyError(parsed.error)}`);
  }
  return parsed.data.credentials;
}

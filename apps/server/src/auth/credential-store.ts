import { randomUUID } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
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
import writeFileAtomic from 'write-file-atomic';
import { z } from 'zod';
import { createCredentialUsage } from './credential-usage.ts';
import { generateToken, hashesEqual, hashToken } from './tokens.ts';
import { withFileLock } from './with-file-lock.ts';

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
 * Credentials of one server: hashes in `{dataDir}/credentials.json` (mode 0600), plus fixed
 * tokens given by flag or env, which live only in memory (a fixed client token is an admin). The file is re-read when it changes,
 * so `molf token create|revoke` takes effect on the next connection without a restart.
 */
export type CredentialStore = {
  /** The credential a token belongs to; a stored one's use is noted (see `recordUsage`). */
  verify(token: string): Verified | undefined;
  /** The stored credentials, with when each last authenticated where known. */
  list(): ListedCredential[];
  /**
   * Stores a new credential and returns its token, which exists nowhere else. Safe against other
   * processes changing the file at the same time (a lock beside it).
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
  /** Whether a credential a connection authenticated with still exists; false if the file is broken. */
  isActive(credentialId: string): boolean;
  /** Whether a credential is a fixed token from the server's own configuration. */
  isFixed(credentialId: string): boolean;
  /**
   * Notes that a stored credential is in use now (a connection it opened is still live), so that a
   * worker connected for weeks is not shown as last used weeks ago. Cheap: memory only.
   */
  markInUse(credentialId: string): void;
  /** The credentials file, for watching. */
  path: string;
  /** Writes the last-used times not yet written. */
  close(): Promise<void>;
};

export function openCredentialStore(options: {
  dataDir: string;
  fixed?: Partial<Record<Kind, string>>;
  /**
   * Whether this process keeps `credential-usage.json` (when each credential last authenticated):
   * the server does; `molf token` only reads it. Default false.
   */
  recordUsage?: boolean;
  /** Default `Date.now`. */
  now?: () => number;
  /** Where a failed write of the usage file is told. Default: nowhere. */
  logger?: Logger;
}): CredentialStore {
  const path = join(options.dataDir, CREDENTIALS_FILE);
  const now = options.now ?? Date.now;
  const fixed = Object.entries(options.fixed ?? {}).flatMap(([kind, token]) =>
    token === undefined
      ? []
      : [{ role: (kind === 'worker' ? 'worker' : 'admin') as Role, id: `fixed-${kind}`, hash: hashToken(token) }],
  );
  let loadedMtimeMs = -1;
  let stored: StoredCredential[] = [];

  /** Re-reads the file if it changed; `force` re-reads it anyway (under the lock: an mtime may not tick). */
  function refresh(force = false): void {
    let mtimeMs: number;
    try {
      mtimeMs = statSync(path).mtimeMs;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
        stored = [];
        loadedMtimeMs = -1;
        return;
      }
      throw error;
    }
    if (mtimeMs === loadedMtimeMs && !force) return;
    const parsed = CredentialsFileSchema.safeParse(parseJsonOrThrow(path, readFileSync(path, 'utf8')));
    if (!parsed.success) {
      // Refuse everything rather than guess: a broken credentials file must never let anyone in.
      throw new MolfError(
        'config_invalid',
        `${path} is not a valid credentials file: ${z.prettifyError(parsed.error)}`,
      );
    }
    stored = parsed.data.credentials;
    loadedMtimeMs = mtimeMs;
  }

  async function save(credentials: StoredCredential[]): Promise<void> {
    await writeFileAtomic(path, `${JSON.stringify({ version: 2, credentials }, null, 2)}\n`, { mode: 0o600 });
    stored = credentials;
    loadedMtimeMs = statSync(path).mtimeMs;
  }

  const usage = createCredentialUsage({
    dataDir: options.dataDir,
    now,
    known: () => new Set(stored.map((credential) => credential.id)),
    writes: options.recordUsage === true,
    ...(options.logger === undefined ? {} : { logger: options.logger }),
  });

  refresh();
  // A minted token given as the fixed one would never be revocable and could claim any worker id.
  for (const credential of fixed) {
    if (stored.some((candidate) => hashesEqual(candidate.hash, credential.hash))) {
      throw new MolfError(
        'config_invalid',
        `the fixed ${kindOf(credential.role)} token is a token stored in ${path} (made with \`molf token create\`); ` +
          'give the server a token of its own, or none',
      );
    }
  }

  return {
    verify(token) {
      const hash = hashToken(token);
      // Fixed tokens don't depend on the file, so a damaged file can't lock out `molf up`.
      const fixedMatch = fixed.find((credential) => hashesEqual(credential.hash, hash));
      if (fixedMatch !== undefined) return { role: fixedMatch.role, credentialId: fixedMatch.id };
      refresh();
      const match = stored.find((credential) => hashesEqual(credential.hash, hash));
      if (match === undefined) return undefined;
      usage.record(match.id);
      return { role: match.role, credentialId: match.id };
    },
    list() {
      refresh();
      const lastUsed = usage.read();
      return stored.map((credential) => {
        const ms = lastUsed.get(credential.id);
        return ms === undefined ? { ...credential } : { ...credential, lastUsedAt: new Date(ms).toISOString() };
      });
    },
    async create({ role, label, origin = 'created', id }) {
      await mkdir(options.dataDir, { recursive: true, mode: 0o700 });
      return withFileLock(path, async () => {
        refresh(true);
        const token = generateToken(role);
        const credential: StoredCredential = {
          id: id ?? randomUUID().slice(0, 8),
          role,
          label,
          hash: hashToken(token),
          createdAt: new Date(now()).toISOString(),
          origin,
        };
        if (stored.some((candidate) => candidate.id === credential.id)) {
          throw new MolfError('conflict', `a credential with id ${credential.id} exists already in ${path}`);
        }
        await save([...stored, credential]);
        return { token, credential };
      });
    },
    revoke(id) {
      refresh();
      // Nothing to take the lock for (the data directory may not even exist).
      if (!stored.some((credential) => credential.id === id)) return Promise.resolve(false);
      return withFileLock(path, async () => {
        refresh(true);
        const remaining = stored.filter((credential) => credential.id !== id);
        if (remaining.length === stored.length) return false;
        await save(remaining);
        return true;
      });
    },
    hasStored(kind) {
      refresh();
      return stored.some((credential) => kindOf(credential.role) === kind);
    },
    isActive(credentialId) {
      if (fixed.some((credential) => credential.id === credentialId)) return true;
      try {
        refresh();
      } catch {
        return false;
      }
      return stored.some((credential) => credential.id === credentialId);
    },
    markInUse(credentialId) {
      if (stored.some((credential) => credential.id === credentialId)) usage.record(credentialId);
    },
    isFixed(credentialId) {
      return fixed.some((credential) => credential.id === credentialId);
    },
    path,
    close: () => usage.close(),
  };
}

function parseJsonOrThrow(path: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new MolfError('config_invalid', `${path} is not valid JSON: ${(error as Error).message}`, { cause: error });
  }
}

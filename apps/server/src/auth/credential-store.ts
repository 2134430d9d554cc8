import { randomUUID } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { type Kind, kindOf, MolfError, type Role, RoleSchema } from '@molf/protocol';
import writeFileAtomic from 'write-file-atomic';
import { z } from 'zod';
import { generateToken, hashesEqual, hashToken } from './tokens.ts';

const StoredCredentialSchema = z.object({
  id: z.string().min(1),
  role: RoleSchema,
  label: z.string(),
  /** SHA-256 of the token, hex. */
  hash: z.string().regex(/^[0-9a-f]{64}$/),
  createdAt: z.string(),
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

export const CREDENTIALS_FILE = 'credentials.json';

/**
 * Credentials of one server: hashes in `{dataDir}/credentials.json` (mode 0600), plus fixed
 * tokens given by flag or env, which live only in memory (a fixed client token is an admin). The file is re-read when it changes,
 * so `molf token create|revoke` takes effect on the next connection without a restart.
 */
export type CredentialStore = {
  verify(token: string): Verified | undefined;
  list(): StoredCredential[];
  create(options: { role: Role; label: string }): Promise<{ token: string; credential: StoredCredential }>;
  revoke(id: string): Promise<boolean>;
  /** Whether a credential of this kind is stored. */
  hasStored(kind: Kind): boolean;
  /** Whether a credential a connection authenticated with still exists; false if the file is broken. */
  isActive(credentialId: string): boolean;
  /** Whether a credential is a fixed token from the server's own configuration. */
  isFixed(credentialId: string): boolean;
  /** The credentials file, for watching. */
  path: string;
};

export function openCredentialStore(options: {
  dataDir: string;
  fixed?: Partial<Record<Kind, string>>;
}): CredentialStore {
  const path = join(options.dataDir, CREDENTIALS_FILE);
  const fixed = Object.entries(options.fixed ?? {}).flatMap(([kind, token]) =>
    token === undefined
      ? []
      : [{ role: (kind === 'worker' ? 'worker' : 'admin') as Role, id: `fixed-${kind}`, hash: hashToken(token) }],
  );
  let loadedMtimeMs = -1;
  let stored: StoredCredential[] = [];

  function refresh(): void {
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
    if (mtimeMs === loadedMtimeMs) return;
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
      let match = fixed.find((credential) => hashesEqual(credential.hash, hash));
      if (match === undefined) {
        refresh();
        match = stored.find((credential) => hashesEqual(credential.hash, hash));
      }
      return match === undefined ? undefined : { role: match.role, credentialId: match.id };
    },
    list() {
      refresh();
      return [...stored];
    },
    async create({ role, label }) {
      refresh();
      const token = generateToken(role);
      const credential: StoredCredential = {
        id: randomUUID().slice(0, 8),
        role,
        label,
        hash: hashToken(token),
        createdAt: new Date().toISOString(),
      };
      await save([...stored, credential]);
      return { token, credential };
    },
    async revoke(id) {
      refresh();
      const remaining = stored.filter((credential) => credential.id !== id);
      if (remaining.length === stored.length) return false;
      await save(remaining);
      return true;
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
    isFixed(credentialId) {
      return fixed.some((credential) => credential.id === credentialId);
    },
    path,
  };
}

function parseJsonOrThrow(path: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new MolfError('config_invalid', `${path} is not valid JSON: ${(error as Error).message}`, { cause: error });
  }
}

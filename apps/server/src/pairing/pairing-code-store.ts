import { randomBytes } from 'node:crypto';
import {
  type Kind,
  kindOf,
  MolfError,
  type PairingCodeInfo,
  type PairingCreateOutput,
  type Role,
  RoleSchema,
} from '@molf/protocol';
import { z } from 'zod';
import type { CredentialStore, StoredCredential } from '../auth/credential-store.ts';
import { hashesEqual } from '../auth/tokens.ts';
import type { StateDocuments } from '../state/index.ts';
import { generatePairingSalt, hashPairingCode } from './hash-pairing-code.ts';
import { formatPairingCode, generatePairingCode } from './pairing-code-text.ts';

export const PAIRING_CODES_FILE = 'pairing-codes.json';
/** How long a code can be redeemed: long enough to walk to the other machine, short enough to be guessed never. */
export const PAIRING_CODE_TTL_MS = 5 * 60_000;
/** Codes live at once: with 2^40 codes, 5 live ones leave a guess one chance in 2 × 10^11. */
export const MAX_LIVE_PAIRING_CODES = 5;
/**
 * How long an expired, used or cancelled code is kept after it ended, so that a late try hears
 * "expired" or "already used" rather than "not valid"; the most such codes kept.
 */
const KEEP_ENDED_MS = 24 * 60 * 60_000;
const MAX_ENDED_KEPT = 200;

const StoredCodeSchema = z.object({
  id: z.string().min(1),
  /** scrypt of the canonical code with the file's salt, hex; never the code. */
  hash: z.string().regex(/^[0-9a-f]{64}$/),
  role: RoleSchema,
  /** The name of the credential it becomes; absent: the redeemer's. */
  name: z.string().optional(),
  createdAt: z.string(),
  expiresAt: z.string(),
  usedAt: z.string().optional(),
  /** The credential the code became. */
  credentialId: z.string().optional(),
  cancelledAt: z.string().optional(),
});
type StoredCode = z.infer<typeof StoredCodeSchema>;

const PairingCodesFileSchema = z.object({
  version: z.literal(1),
  salt: z.string().min(16),
  codes: z.array(StoredCodeSchema),
});
type PairingCodesFile = z.infer<typeof PairingCodesFileSchema>;

/** How a redemption went. Only `paired` used the code up; `wrong_kind` leaves it live. */
export type Redemption =
  | { type: 'paired'; token: string; credential: StoredCredential }
  | { type: 'unknown' }
  | { type: 'expired'; expiredAt: string }
  | { type: 'used'; usedAt: string }
  | { type: 'cancelled'; cancelledAt: string }
  | { type: 'wrong_kind'; role: Role };

/**
 * One-time pairing codes in the `pairing-codes.json` document (a 0600 file in the data directory,
 * or a row shared by every instance on the database): hashed, written whole, each
 * read-modify-write under the document's lock, shared with other processes (the server and
 * `molf pair`) and instances, so that a code is redeemed once wherever it is tried. A damaged
 * document refuses everything, naming where it is; it is never rewritten.
 */
export type PairingCodeStore = {
  /** A new code for `role`, live for 5 minutes; `busy` when 5 are live already. */
  create(input: { role: Role; name?: string | undefined }): Promise<PairingCreateOutput>;
  /** The live codes, oldest first: never the codes themselves. */
  list(): Promise<PairingCodeInfo[]>;
  /** Ends a live code; false if no live code has that id. */
  cancel(id: string): Promise<boolean>;
  /**
   * Trades a canonical code (see `safeParsePairingCode`) for a new credential of its role, named
   * by the code or else `name`. The code is marked used before the credential is written, so a
   * crash between leaves a used code and no credential (a code to make again), never a
   * credential and a live code; a failed credential write gives the code back.
   */
  redeem(input: { code: string; kind: Kind; name: string }): Promise<Redemption>;
  /** Where the codes are, for messages: the file's path, or the database. */
  where: string;
};

export function openPairingCodeStore(options: {
  /** Where `pairing-codes.json` is kept. */
  documents: StateDocuments;
  /** Where redeemed codes become credentials. */
  credentials: Pick<CredentialStore, 'create'>;
  /** Default `Date.now`. */
  now?: () => number;
}): PairingCodeStore {
  const { documents } = options;
  const where = documents.where(PAIRING_CODES_FILE);
  const now = options.now ?? Date.now;

  async function load(): Promise<PairingCodesFile | undefined> {
    let text: string | undefined;
    try {
      text = await documents.read(PAIRING_CODES_FILE);
    } catch (error) {
      // A file that cannot be read (permissions, a directory in its place) is the person's to mend;
      // a database that cannot be reached says so itself.
      if ((error as NodeJS.ErrnoException).syscall === undefined) throw error;
      throw new MolfError('config_invalid', `cannot read ${where}: ${(error as Error).message}`, { cause: error });
    }
    if (text === undefined) return undefined;
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (error) {
      throw damaged(`not valid JSON (${(error as Error).message})`, error);
    }
    const parsed = PairingCodesFileSchema.safeParse(json);
    if (!parsed.success) throw damaged(z.prettifyError(parsed.error));
    return parsed.data;
  }

  function damaged(reason: string, cause?: unknown): MolfError {
    // Nobody pairs with a file that cannot be read: guessing its content could let someone in.
    return new MolfError(
      'config_invalid',
      `${where} is damaged: ${reason}. Nobody can pair until it is mended or removed (removing it ends every live code)`,
      cause === undefined ? undefined : { cause },
    );
  }

  async function save(file: PairingCodesFile): Promise<void> {
    await documents.write(PAIRING_CODES_FILE, `${JSON.stringify(file, null, 2)}\n`);
  }

  function isLive(code: StoredCode, at: number): boolean {
    return code.usedAt === undefined && code.cancelledAt === undefined && Date.parse(code.expiresAt) > at;
  }

  /** The codes still worth keeping: live ones, and ended ones for a day (the latest 200). */
  function prune(codes: StoredCode[], at: number): StoredCode[] {
    const endedAt = (code: StoredCode) =>
      Math.min(Date.parse(code.usedAt ?? code.cancelledAt ?? code.expiresAt), Date.parse(code.expiresAt));
    const live = codes.filter((code) => isLive(code, at));
    const ended = codes
      .filter((code) => !isLive(code, at) && at - endedAt(code) < KEEP_ENDED_MS)
      .slice(-MAX_ENDED_KEPT);
    const kept = new Set([...live, ...ended]);
    return codes.filter((code) => kept.has(code));
  }

  function toInfo(code: StoredCode): PairingCodeInfo {
    return {
      id: code.id,
      role: code.role,
      ...(code.name === undefined ? {} : { name: code.name }),
      createdAt: code.createdAt,
      expiresAt: code.expiresAt,
    };
  }

  const locked = <T>(task: () => Promise<T>) => documents.lock(PAIRING_CODES_FILE, task);

  return {
    where,

    async create({ role, name }) {
      return locked(async () => {
        const file = (await load()) ?? { version: 1 as const, salt: generatePairingSalt(), codes: [] };
        const at = now();
        const live = file.codes.filter((code) => isLive(code, at));
        if (live.length >= MAX_LIVE_PAIRING_CODES) {
          const oldest = Math.min(...live.map((code) => Date.parse(code.expiresAt)));
          throw new MolfError(
            'busy',
            `${MAX_LIVE_PAIRING_CODES} pairing codes are live already, the most a server keeps: the oldest expires at ` +
              `${new Date(oldest).toISOString()} (in ${formatWait(oldest - at)}). Cancel one (molf pair cancel ID) or wait`,
          );
        }
        const code = generatePairingCode();
        const stored: StoredCode = {
          id: randomBytes(4).toString('hex'),
          hash: await hashPairingCode(code, file.salt),
          role,
          ...(name === undefined ? {} : { name }),
          createdAt: new Date(at).toISOString(),
          expiresAt: new Date(at + PAIRING_CODE_TTL_MS).toISOString(),
        };
        await save({ ...file, codes: prune([...file.codes, stored], at) });
        return { ...toInfo(stored), code: formatPairingCode(code) };
      });
    },

    async list() {
      const file = await load();
      const at = now();
      return (file?.codes ?? []).filter((code) => isLive(code, at)).map(toInfo);
    },

    async cancel(id) {
      const before = await load();
      if (before === undefined || !before.codes.some((code) => code.id === id)) return false;
      return locked(async () => {
        const file = await load();
        const at = now();
        const target = file?.codes.find((code) => code.id === id && isLive(code, at));
        if (file === undefined || target === undefined) return false;
        const cancelledAt = new Date(at).toISOString();
        const codes = file.codes.map((code) => (code === target ? { ...code, cancelledAt } : code));
        await save({ ...file, codes: prune(codes, at) });
        return true;
      });
    },

    async redeem({ code, kind, name }) {
      // Without a file there is no code to find, and nothing to lock.
      if ((await load()) === undefined) return { type: 'unknown' };
      return locked(async (): Promise<Redemption> => {
        const file = await load();
        if (file === undefined) return { type: 'unknown' };
        const hash = await hashPairingCode(code, file.salt);
        const target = file.codes.find((candidate) => hashesEqual(candidate.hash, hash));
        const at = now();
        if (target === undefined) return { type: 'unknown' };
        if (target.usedAt !== undefined) return { type: 'used', usedAt: target.usedAt };
        if (target.cancelledAt !== undefined) return { type: 'cancelled', cancelledAt: target.cancelledAt };
        if (Date.parse(target.expiresAt) <= at) return { type: 'expired', expiredAt: target.expiresAt };
        if (kindOf(target.role) !== kind) return { type: 'wrong_kind', role: target.role };

        const credentialId = randomBytes(4).toString('hex');
        const used: StoredCode = { ...target, usedAt: new Date(at).toISOString(), credentialId };
        await save({
          ...file,
          codes: prune(
            file.codes.map((entry) => (entry === target ? used : entry)),
            at,
          ),
        });
        try {
          const { token, credential } = await options.credentials.create({
            role: target.role,
            label: target.name ?? name,
            origin: 'paired',
            id: credentialId,
          });
          return { type: 'paired', token, credential };
        } catch (error) {
          // The credential was not made: the code is live again for another try.
          const current = await load().catch(() => undefined);
          if (current !== undefined) {
            await save({
              ...current,
              codes: current.codes.map((entry) => (entry.id === target.id ? target : entry)),
            }).catch(() => {});
          }
          throw error;
        }
      });
    },
  };
}

/** A wait in words: `4 min 10 s`, `40 s`. */
export function formatWait(ms: number): string {
  const seconds = Math.max(1, Math.ceil(ms / 1000));
  const minutes = Math.floor(seconds / 60);
  const rest = seconds % 60;
  if (minutes === 0) return `${rest} s`;
  return rest === 0 ? `${minutes} min` : `${minutes} min ${rest} s`;
}

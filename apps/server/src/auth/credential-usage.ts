import type { Logger } from '@molf/logging';
import { z } from 'zod';
import type { StateDocuments } from '../state/index.ts';

/** When each stored credential last authenticated, as the server last wrote it. */
export const CREDENTIAL_USAGE_FILE = 'credential-usage.json';

const UsageFileSchema = z.object({
  version: z.literal(1),
  /** Credential id → ISO 8601 time. */
  lastUsedAt: z.record(z.string(), z.string()),
});

/** How often, at most, the server writes the document: a busy server reconnecting clients writes once per period. */
export const USAGE_FLUSH_MS = 10_000;

/**
 * Last-used times: kept in memory by the server on each authentication (a map write, nothing
 * else on that path), written to the `credential-usage.json` document at most every
 * {@link USAGE_FLUSH_MS} and at close, merged under its lock with what other instances wrote.
 * Only servers write it; `molf token list` reads it. It is a hint for people: a missing or
 * damaged document only means the times are not known.
 */
export type CredentialUsage = {
  /** Notes that `credentialId` authenticated now. */
  record(credentialId: string): void;
  /** The last-used time of each credential, the document's merged with this process's newer ones (ms). */
  read(): Map<string, number>;
  /** Writes what is new; keeps only the ids `known` still lists. */
  flush(): Promise<void>;
  /** Stops the timer and writes what is new. */
  close(): Promise<void>;
};

export function createCredentialUsage(options: {
  documents: StateDocuments;
  /** Default `Date.now`. */
  now?: () => number;
  /** The credentials that still exist, so a revoked one's time is dropped from the document. */
  known: () => ReadonlySet<string>;
  /** Whether this process writes the document (the server); a reader only reads it. Default false. */
  writes?: boolean;
  logger?: Logger;
}): CredentialUsage {
  const { documents } = options;
  const now = options.now ?? Date.now;
  const recorded = new Map<string, number>();
  let timer: NodeJS.Timeout | undefined;
  let dirty = false;
  let cached: { version: string; times: Map<string, number> } | undefined;

  function readKnown(): Map<string, number> {
    let known: { text: string | undefined; version: string };
    try {
      known = documents.known(CREDENTIAL_USAGE_FILE);
    } catch {
      return new Map();
    }
    if (cached?.version !== known.version) cached = { version: known.version, times: parseTimes(known.text) };
    return cached.times;
  }

  function withRecorded(times: Map<string, number>): Map<string, number> {
    const merged = new Map(times);
    for (const [id, ms] of recorded) merged.set(id, Math.max(ms, merged.get(id) ?? 0));
    return merged;
  }

  async function flush(): Promise<void> {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    if (!dirty || options.writes !== true) return;
    dirty = false;
    try {
      // Under the lock, over the document as it is now: another instance's newer times are kept.
      await documents.lock(CREDENTIAL_USAGE_FILE, async () => {
        const latest = parseTimes(await documents.read(CREDENTIAL_USAGE_FILE).catch(() => undefined));
        const known = options.known();
        const entries = [...withRecorded(latest)].filter(([id]) => known.has(id));
        const lastUsedAt = Object.fromEntries(entries.map(([id, ms]) => [id, new Date(ms).toISOString()]));
        await documents.write(CREDENTIAL_USAGE_FILE, `${JSON.stringify({ version: 1, lastUsedAt }, null, 2)}\n`);
      });
    } catch (error) {
      dirty = true;
      options.logger?.warn(
        { err: error, path: documents.where(CREDENTIAL_USAGE_FILE) },
        'could not write when credentials were last used',
      );
    }
  }

  return {
    record(credentialId) {
      recorded.set(credentialId, now());
      dirty = true;
      if (options.writes === true && timer === undefined) {
        timer = setTimeout(() => void flush(), USAGE_FLUSH_MS);
        timer.unref();
      }
    },
    read: () => withRecorded(readKnown()),
    flush,
    close: flush,
  };
}

/** The times a usage document holds; none when it is missing or damaged (they are only not known). */
function parseTimes(text: string | undefined): Map<string, number> {
  const times = new Map<string, number>();
  if (text === undefined) return times;
  try {
    const parsed = UsageFileSchema.safeParse(JSON.parse(text));
    if (parsed.success) {
      for (const [id, iso] of Object.entries(parsed.data.lastUsedAt)) {
        const ms = Date.parse(iso);
        if (Number.isFinite(ms)) times.set(id, ms);
      }
    }
  } catch {
    // Damaged: the times are not known, which is all this document is for.
  }
  return times;
}

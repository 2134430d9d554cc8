import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '@molf/logging';
import writeFileAtomic from 'write-file-atomic';
import { z } from 'zod';

/** When each stored credential last authenticated, as the server last wrote it. */
export const CREDENTIAL_USAGE_FILE = 'credential-usage.json';

const UsageFileSchema = z.object({
  version: z.literal(1),
  /** Credential id → ISO 8601 time. */
  lastUsedAt: z.record(z.string(), z.string()),
});

/** How often, at most, the server writes the file: a busy server reconnecting clients writes once per period. */
export const USAGE_FLUSH_MS = 10_000;

/**
 * Last-used times: kept in memory by the server on each authentication (a map write, nothing
 * else on that path), written to `{dataDir}/credential-usage.json` at most every
 * {@link USAGE_FLUSH_MS} and at close. Only the server writes it; `molf token list` reads it. It
 * is a hint for people: a missing or damaged file only means the times are not known.
 */
export type CredentialUsage = {
  /** Notes that `credentialId` authenticated now. */
  record(credentialId: string): void;
  /** The last-used time of each credential, the file's merged with this process's newer ones (ms). */
  read(): Map<string, number>;
  /** Writes what is new; keeps only the ids `known` still lists. */
  flush(): Promise<void>;
  /** Stops the timer and writes what is new. */
  close(): Promise<void>;
};

export function createCredentialUsage(options: {
  dataDir: string;
  /** Default `Date.now`. */
  now?: () => number;
  /** The credentials that still exist, so a revoked one's time is dropped from the file. */
  known: () => ReadonlySet<string>;
  /** Whether this process writes the file (the server); a reader only reads it. Default false. */
  writes?: boolean;
  logger?: Logger;
}): CredentialUsage {
  const path = join(options.dataDir, CREDENTIAL_USAGE_FILE);
  const now = options.now ?? Date.now;
  const recorded = new Map<string, number>();
  let timer: NodeJS.Timeout | undefined;
  let dirty = false;
  let cached: { mtimeMs: number; times: Map<string, number> } | undefined;

  function readFile(): Map<string, number> {
    let mtimeMs: number;
    try {
      mtimeMs = statSync(path).mtimeMs;
    } catch {
      return new Map();
    }
    if (cached?.mtimeMs === mtimeMs) return cached.times;
    const times = new Map<string, number>();
    try {
      const parsed = UsageFileSchema.safeParse(JSON.parse(readFileSync(path, 'utf8')));
      if (parsed.success) {
        for (const [id, iso] of Object.entries(parsed.data.lastUsedAt)) {
          const ms = Date.parse(iso);
          if (Number.isFinite(ms)) times.set(id, ms);
        }
      }
    } catch {
      // Damaged: the times are not known, which is all this file is for.
    }
    cached = { mtimeMs, times };
    return times;
  }

  function read(): Map<string, number> {
    const merged = new Map(readFile());
    for (const [id, ms] of recorded) merged.set(id, Math.max(ms, merged.get(id) ?? 0));
    return merged;
  }

  async function flush(): Promise<void> {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    if (!dirty || options.writes !== true) return;
    dirty = false;
    const known = options.known();
    const entries = [...read()].filter(([id]) => known.has(id));
    const lastUsedAt = Object.fromEntries(entries.map(([id, ms]) => [id, new Date(ms).toISOString()]));
    try {
      await writeFileAtomic(path, `${JSON.stringify({ version: 1, lastUsedAt }, null, 2)}\n`, { mode: 0o600 });
    } catch (error) {
      dirty = true;
      options.logger?.warn({ err: error, path }, 'could not write when credentials were last used');
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
    read,
    flush,
    close: flush,
  };
}

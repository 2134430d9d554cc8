import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import type { Logger } from '@molf/logging';

/** How a grant was given, as the audit log recorded the "always" answer that saved it. */
export type GrantOrigin = {
  grantId: string;
  /** When the answer was recorded (ISO 8601). */
  givenAt: string;
  /** `client:<credential id>`, as in the audit record. */
  by: string;
  client?: string;
  connectionId?: string;
  approvalId?: string;
  sessionId?: string;
  toolCallId?: string;
  /** The approved call's subjects. */
  subjects: string[];
};

/** The fields of an audit line the index reads. */
export type AuditLine = {
  time?: unknown;
  by?: unknown;
  client?: unknown;
  connectionId?: unknown;
  approvalId?: unknown;
  sessionId?: unknown;
  toolCallId?: unknown;
  subjects?: unknown;
  grants?: unknown;
};

export type GrantOrigins = {
  /** Notes a record just appended to the log. */
  note(line: AuditLine): void;
  /** How a grant was given; reads the log as it was when opened the first time it is asked. */
  get(grantId: string): Promise<GrantOrigin | undefined>;
};

/** At most this many grants are remembered (the newest); older ones are listed with what their rule says. */
export const MAX_GRANT_ORIGINS = 10_000;

/** At most this many subjects of one call are kept in memory (a shell line may have hundreds). */
const MAX_SUBJECTS = 64;

const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/** The grants an audit record says were given (an "always" answer's `rules_changed` record), none for another record. */
export function toGrantOrigins(line: AuditLine): GrantOrigin[] {
  if (!Array.isArray(line.grants) || typeof line.time !== 'string' || typeof line.by !== 'string') return [];
  const subjects = Array.isArray(line.subjects)
    ? line.subjects.filter((subject): subject is string => typeof subject === 'string').slice(0, MAX_SUBJECTS)
    : [];
  const optional = (name: 'client' | 'connectionId' | 'approvalId' | 'sessionId' | 'toolCallId') => {
    const value = text(line[name]);
    return value === undefined ? {} : { [name]: value };
  };
  return line.grants.flatMap((grant: unknown) => {
    const grantId = text((grant as { grantId?: unknown } | null)?.grantId);
    if (grantId === undefined) return [];
    return [
      {
        grantId,
        givenAt: line.time as string,
        by: line.by as string,
        ...optional('client'),
        ...optional('connectionId'),
        ...optional('approvalId'),
        ...optional('sessionId'),
        ...optional('toolCallId'),
        subjects,
      },
    ];
  });
}

function remember(map: Map<string, GrantOrigin>, origin: GrantOrigin): void {
  map.delete(origin.grantId);
  map.set(origin.grantId, origin);
  // Oldest first: a Map iterates in insertion order.
  while (map.size > MAX_GRANT_ORIGINS) map.delete(map.keys().next().value as string);
}

/**
 * An index of the audit log's grant records (the `rules_changed` records of "always" answers that
 * carry `grants`), so that listing a worker's grants does not read the whole log each time. What
 * is appended after the log was opened is noted as it is written; what the log held before is
 * read once, streamed, at the first question (a server that is never asked never reads it), only
 * the lines that mention grants parsed. Bounded to the newest {@link MAX_GRANT_ORIGINS}.
 */
export function createGrantOrigins(options: {
  path: string;
  /** The log's size when it was opened: the part read at the first question. */
  sizeAtOpen: number;
  logger: Logger;
}): GrantOrigins {
  /** What was appended since the log was opened, until the index is built. */
  const live = new Map<string, GrantOrigin>();
  let index: Promise<Map<string, GrantOrigin>> | undefined;
  let built: Map<string, GrantOrigin> | undefined;

  async function readEarlier(): Promise<Map<string, GrantOrigin>> {
    const earlier = new Map<string, GrantOrigin>();
    if (options.sizeAtOpen === 0) return earlier;
    try {
      const lines = createInterface({
        input: createReadStream(options.path, { start: 0, end: options.sizeAtOpen - 1, encoding: 'utf8' }),
        crlfDelay: Number.POSITIVE_INFINITY,
      });
      for await (const line of lines) {
        if (!line.includes('"grants":')) continue;
        try {
          for (const origin of toGrantOrigins(JSON.parse(line) as AuditLine)) remember(earlier, origin);
        } catch {
          // A torn last line (a crash mid-write) tells nothing; the next ones still count.
        }
      }
    } catch (error) {
      options.logger.warn(
        { err: error, path: options.path },
        'cannot read the audit log: grants are listed without how they were given',
      );
    }
    return earlier;
  }

  return {
    note(line) {
      for (const origin of toGrantOrigins(line)) remember(built ?? live, origin);
    },
    async get(grantId) {
      index ??= readEarlier().then((earlier) => {
        // The earlier records first, so that the bound drops the oldest.
        for (const origin of live.values()) remember(earlier, origin);
        live.clear();
        built = earlier;
        return earlier;
      });
      return (await index).get(grantId);
    },
  };
}

import type { Logger } from '@molf/logging';
import type { Database } from '../database/index.ts';
import { type AuditEntry, type AuditLog, DEFAULT_AUDIT_READ_LIMIT, toAuditEntry } from './audit-log.ts';
import { toGrantOrigins } from './grant-origins.ts';

/** Records written in one statement at most. */
const BATCH = 500;
/** A failed write is tried again after this long, until it goes through or the log closes. */
const RETRY_MS = 1_000;

/**
 * The audit log as rows of `audit_log`, which every server on the database appends to and reads.
 * `append` stays synchronous, as the gate needs: records wait in memory, in order, and are
 * written in batches. While they cannot be written (the database unreachable, a write refused),
 * `failure` is set, so the gate refuses every call, and the write is tried again each second;
 * once they are written, calls go through again. `close` writes what is waiting, if it can.
 */
export function openPostgresAuditLog(options: { database: Database; logger: Logger }): AuditLog {
  const { sql, name: databaseName } = options.database;
  const { logger } = options;
  const waiting: AuditEntry[] = [];
  let writing: Promise<void> | undefined;
  let failed: Error | undefined;
  let closed = false;
  let retry: { timer: NodeJS.Timeout; wake: () => void } | undefined;
  /** Records appended, and written, since the log opened. */
  let appended = 0;
  let written = 0;
  /** Readers waiting for records to be written, told after every write and every failure. */
  const readers = new Set<() => void>();
  const tellReaders = () => {
    for (const reader of readers) reader();
    readers.clear();
  };

  const pause = () =>
    new Promise<void>((wake) => {
      const timer = setTimeout(() => {
        retry = undefined;
        wake();
      }, RETRY_MS);
      timer.unref();
      retry = { timer, wake };
    });

  async function writeWaiting(): Promise<void> {
    while (waiting.length > 0) {
      const batch = waiting.slice(0, BATCH);
      try {
        const rows = batch.map((entry) => ({
          at: new Date(entry.time),
          worker_id: entry.workerId,
          decision: entry.decision,
          grant_ids: sql.array((entry.grants ?? []).map((grant) => grant.grantId)),
          record: JSON.stringify(entry),
        }));
        await sql`insert into audit_log ${sql(rows, 'at', 'worker_id', 'decision', 'grant_ids', 'record')}`;
        waiting.splice(0, batch.length);
        written += batch.length;
        tellReaders();
        if (failed !== undefined) {
          logger.info({ database: databaseName }, 'the approval audit log is written again; tool calls go through');
          failed = undefined;
        }
      } catch (error) {
        if (failed === undefined) {
          logger.error(
            { err: error, database: databaseName, waiting: waiting.length },
            'cannot write the approval audit log: every tool call is refused until it can',
          );
        }
        failed = error as Error;
        tellReaders();
        if (closed) return;
        await pause();
      }
    }
  }

  function startWriting(): void {
    writing ??= writeWaiting().finally(() => {
      writing = undefined;
      if (waiting.length > 0 && !closed) startWriting();
    });
  }

  /** Waits until the records appended so far are written, or writing fails. */
  async function storedSoFar(): Promise<void> {
    const target = appended;
    while (written < target && failed === undefined && !closed) {
      await new Promise<void>((resolveRead) => readers.add(resolveRead));
    }
  }

  return {
    where: `audit_log in the database ${databaseName}`,

    append(record) {
      if (closed) {
        logger.error(
          { decision: record.decision, workerId: record.workerId },
          'an audit record came after the log closed',
        );
        return;
      }
      waiting.push(toAuditEntry(record, new Date()));
      appended += 1;
      startWriting();
    },

    async grantOrigin(grantId) {
      // Still waiting here first: the newest record of the grant is the one that counts.
      for (const entry of [...waiting].reverse()) {
        const origin = toGrantOrigins(entry).find((candidate) => candidate.grantId === grantId);
        if (origin !== undefined) return origin;
      }
      const [row] = await sql<{ record: string }[]>`
        select record from audit_log where grant_ids @> array[${grantId}]::text[]
        order by at desc, id desc limit 1`;
      if (row === undefined) return undefined;
      return toGrantOrigins(JSON.parse(row.record)).find((candidate) => candidate.grantId === grantId);
    },

    async read(readOptions = {}) {
      // This server's records appended so far are read back too, once written; while they
      // cannot be, what the database holds.
      await storedSoFar();
      const limit = readOptions.limit ?? DEFAULT_AUDIT_READ_LIMIT;
      const rows =
        readOptions.workerId === undefined
          ? await sql<{ record: string }[]>`
              select record from audit_log order by at desc, id desc limit ${limit}`
          : await sql<{ record: string }[]>`
              select record from audit_log where worker_id = ${readOptions.workerId}
              order by at desc, id desc limit ${limit}`;
      return rows.map((row) => JSON.parse(row.record) as AuditEntry).reverse();
    },

    failure: () => failed,
    stored: storedSoFar,

    async close() {
      if (closed) return;
      closed = true;
      // A write waiting to be tried again is tried once more now.
      if (retry !== undefined) {
        clearTimeout(retry.timer);
        retry.wake();
      }
      await writing;
      tellReaders();
      if (waiting.length > 0) {
        logger.error(
          { database: databaseName, lost: waiting.length },
          'the approval audit log closed with records it could not write',
        );
      }
    },
  };
}

import { createWriteStream, mkdirSync, statSync, type WriteStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '@molf/logging';
import { type AuditEntry, type AuditLog, DEFAULT_AUDIT_READ_LIMIT, toAuditEntry } from './audit-log.ts';
import { createGrantOrigins } from './grant-origins.ts';

/**
 * The audit log as an append-only JSON-lines file `{dataDir}/audit/approvals.jsonl` (0600): one
 * line per decision with its time. A write that fails fails the log for good: the gate then
 * refuses every call.
 */
export function openFileAuditLog(options: { dataDir: string; logger: Logger }): AuditLog {
  const directory = join(options.dataDir, 'audit');
  mkdirSync(directory, { recursive: true, mode: 0o700 });
  const path = join(directory, 'approvals.jsonl');
  const sizeAtOpen = statSync(path, { throwIfNoEntry: false })?.size ?? 0;
  const origins = createGrantOrigins({ path, sizeAtOpen, logger: options.logger });
  const stream: WriteStream = createWriteStream(path, { flags: 'a', mode: 0o600 });
  let failed: Error | undefined;
  stream.on('error', (error) => {
    failed ??= error;
    options.logger.error(
      { err: error, path },
      'cannot write the approval audit log: every tool call is refused until it can',
    );
  });

  /** Resolves once every line written before has reached the file (writes go out in order). */
  const written = () =>
    new Promise<void>((resolvePromise) => {
      if (stream.writableEnded || failed !== undefined) resolvePromise();
      else stream.write('', () => resolvePromise());
    });

  return {
    where: path,
    append(record) {
      if (failed !== undefined) return;
      const entry = toAuditEntry(record, new Date());
      stream.write(`${JSON.stringify(entry)}\n`);
      origins.note(entry);
    },
    grantOrigin: (grantId) => origins.get(grantId),
    async read(readOptions = {}) {
      await written();
      const text = await readFile(path, 'utf8').catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') return '';
        throw error;
      });
      const entries: AuditEntry[] = [];
      for (const line of text.split('\n')) {
        if (line === '') continue;
        try {
          const entry = JSON.parse(line) as AuditEntry;
          if (readOptions.workerId === undefined || entry.workerId === readOptions.workerId) entries.push(entry);
        } catch {
          // A torn line (a crash mid-write) tells nothing; the next ones still count.
        }
      }
      return entries.slice(Math.max(0, entries.length - (readOptions.limit ?? DEFAULT_AUDIT_READ_LIMIT)));
    },
    failure: () => failed,
    stored: written,
    close: () => new Promise<void>((resolvePromise) => stream.end(() => resolvePromise())),
  };
}

import { createHash } from 'node:crypto';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '@molf/logging';
import { MolfError, type SessionInfo } from '@molf/protocol';
import { lockDataDir } from '../data-dir-lock.ts';
import { openFileSessionStore } from '../sessions/file-session-store.ts';
import { sumMessageUsage } from '../sessions/session-usage.ts';
import { openFileStateDocuments } from '../state/file-state-documents.ts';
import type { Database } from './open-database.ts';

/** What a copy found and where it stands: each figure as in the data dir, and as in the database. */
export type CopyReport = {
  sessions: { source: number; copied: number; inDatabase: number };
  messages: { source: number; copied: number; inDatabase: number };
  attachments: { source: number; copied: number; inDatabase: number };
  queuedPrompts: { source: number; copied: number };
  /** Records of the approval audit log (`audit/approvals.jsonl`); a torn line is not one. */
  auditRecords: { source: number; copied: number; inDatabase: number };
  documents: {
    source: number;
    copied: number;
    inDatabase: number;
    names: string[];
    /** Documents the database already had with other content (a cluster's own credentials…): not copied. */
    conflicts: string[];
  };
  /** Sessions the file store could not read (listed with its reason), not copied. */
  damaged: Array<{ sessionId: string; reason: string }>;
};

/**
 * The small state a data dir keeps in files, by document name (the names the stores use): copied as
 * they are. Sessions are copied through the stores; TLS files, logs, config and locks stay with
 * the machine.
 */
const DOCUMENT_PATTERNS = [
  /^credentials\.json$/,
  /^credential-usage\.json$/,
  /^pairing-codes\.json$/,
  /^secrets\/link-key$/,
  /^cron\/[^/]+\.json$/,
  /^workers\/[^/]+\/(permissions\.jsonc|state\.json)$/,
  /^session-grants\/[^/]+\.json$/,
];

const isDocument = (name: string) => DOCUMENT_PATTERNS.some((pattern) => pattern.test(name));

/**
 * Copies a data dir's sessions (metadata, messages, attachments, waiting prompts) and small state
 * into the database, keeping every id and time, so that a `molf up` user can move to a cluster
 * without losing history. Idempotent: what the database has already is kept, so a second run copies
 * nothing and reports the same totals. The server of that data dir must be stopped (its files
 * change while it runs).
 */
export async function copyDataDir(options: {
  dataDir: string;
  database: Database;
  logger: Logger;
}): Promise<CopyReport> {
  await checkIsDataDir(options.dataDir);
  // A server still running on the data dir would change it while it is copied.
  const lock = await lockDataDir(options.dataDir, { holder: 'molf migrate' });
  try {
    return await copyLocked(options);
  } finally {
    await lock.release();
  }
}

async function copyLocked(options: { dataDir: string; database: Database; logger: Logger }): Promise<CopyReport> {
  const { sql } = options.database;
  const source = await openFileSessionStore({ dataDir: options.dataDir, logger: options.logger });
  const documents = openFileStateDocuments({ dataDir: options.dataDir });
  const report: CopyReport = {
    sessions: { source: 0, copied: 0, inDatabase: 0 },
    messages: { source: 0, copied: 0, inDatabase: 0 },
    attachments: { source: 0, copied: 0, inDatabase: 0 },
    queuedPrompts: { source: 0, copied: 0 },
    auditRecords: { source: 0, copied: 0, inDatabase: 0 },
    documents: { source: 0, copied: 0, inDatabase: 0, names: [], conflicts: [] },
    damaged: [],
  };
  try {
    const all: SessionInfo[] = [];
    for (let offset = 0; ; offset += 1_000) {
      const page = await source.list({ limit: 1_000, offset });
      all.push(...page.sessions);
      if (offset === 0) report.damaged = page.damaged;
      if (page.sessions.length < 1_000) break;
    }
    report.sessions.source = all.length;
    for (const session of all) await copySession(session);

    for (const name of await documents.list('')) {
      if (!isDocument(name)) continue;
      const content = await documents.readBytes(name);
      if (content === undefined) continue;
      report.documents.source += 1;
      report.documents.names.push(name);
      const rows = await sql`
        insert into state_documents (name, content) values (${name}, ${content})
        on conflict (name) do nothing returning name`;
      report.documents.copied += rows.length;
      if (rows.length === 0) {
        const [stored] = await sql<{ content: Buffer }[]>`select content from state_documents where name = ${name}`;
        if (stored !== undefined && !Buffer.from(stored.content).equals(Buffer.from(content))) {
          report.documents.conflicts.push(name);
        }
      }
    }
    await copyAuditLog();
  } finally {
    await source.close();
    await documents.close();
  }

  const [totals] = await sql<
    { sessions: string; messages: string; attachments: string; documents: string; audit: string }[]
  >`
    select (select count(*) from sessions) as sessions, (select count(*) from session_messages) as messages,
      (select count(*) from session_attachments) as attachments,
      (select count(*) from state_documents) as documents, (select count(*) from audit_log) as audit`;
  report.sessions.inDatabase = Number(totals?.sessions ?? 0);
  report.messages.inDatabase = Number(totals?.messages ?? 0);
  report.attachments.inDatabase = Number(totals?.attachments ?? 0);
  report.documents.inDatabase = Number(totals?.documents ?? 0);
  report.auditRecords.inDatabase = Number(totals?.audit ?? 0);
  return report;

  /** The audit log's records, in their order, each keyed by its line and hash. */
  async function copyAuditLog(): Promise<void> {
    const text = await readFile(join(options.dataDir, 'audit', 'approvals.jsonl'), 'utf8').catch(
      (error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') return '';
        throw error;
      },
    );
    const rows: Array<Record<string, unknown>> = [];
    text.split('\n').forEach((line, index) => {
      if (line === '') return;
      let entry: { time?: unknown; workerId?: unknown; decision?: unknown; grants?: Array<{ grantId?: unknown }> };
      try {
        entry = JSON.parse(line) as typeof entry;
      } catch {
        return; // A torn line (a crash mid-write) tells nothing, as when the server reads the file.
      }
      if (typeof entry.time !== 'string' || typeof entry.workerId !== 'string' || typeof entry.decision !== 'string') {
        return;
      }
      rows.push({
        at: new Date(entry.time),
        worker_id: entry.workerId,
        decision: entry.decision,
        grant_ids: sql.array(
          (entry.grants ?? []).flatMap((grant) => (typeof grant.grantId === 'string' ? [grant.grantId] : [])),
        ),
        record: line,
        copied_from: `approvals.jsonl:${index + 1}:${createHash('sha256').update(line).digest('hex').slice(0, 16)}`,
      });
    });
    report.auditRecords.source = rows.length;
    for (let start = 0; start < rows.length; start += 500) {
      const copied = await sql`
        insert into audit_log ${sql(rows.slice(start, start + 500), 'at', 'worker_id', 'decision', 'grant_ids', 'record', 'copied_from')}
        on conflict do nothing returning id`;
      report.auditRecords.copied += copied.length;
    }
  }

  async function copySession(session: SessionInfo): Promise<void> {
    const messages = await source.messages(session.sessionId);
    const queued = await source.queued(session.sessionId);
    const attachmentDir = join(options.dataDir, 'sessions', session.sessionId, 'attachments');
    const attachmentNames = (await readdir(attachmentDir).catch(() => [] as string[])).filter((name) =>
      /^[0-9a-f]{64}$/.test(name),
    );
    report.messages.source += messages.length;
    report.attachments.source += attachmentNames.length;
    report.queuedPrompts.source += queued.length;
    // The session's own usage, from its own messages (the file store lists it with its subagents').
    const usage = sumMessageUsage(messages);
    await sql.begin(async (tx) => {
      const created = await tx`
        insert into sessions (session_id, worker_id, name, untitled, model, parent_session_id, parent_tool_call_id,
          parent_agent, created_at, updated_at, message_count, status, input_tokens, output_tokens,
          cache_read_tokens, cache_write_tokens, cost_usd, unpriced_calls)
        values (${session.sessionId}, ${session.workerId}, ${session.name}, ${session.untitled === true},
          ${session.model ?? null}, ${session.parent?.sessionId ?? null}, ${session.parent?.toolCallId ?? null},
          ${session.parent?.agent ?? null}, ${new Date(session.createdAt)}, ${new Date(session.updatedAt)},
          ${messages.length}, 'idle', ${usage.inputTokens}, ${usage.outputTokens},
          ${usage.cacheReadTokens ?? 0}, ${usage.cacheWriteTokens ?? 0}, ${usage.costUsd ?? null},
          ${usage.unpricedCalls ?? 0})
        on conflict (session_id) do update set
          -- Copied before, and the data dir went on: its newer messages are added below, and the
          -- count and usage follow them. A session the database went on with keeps its own.
          message_count = greatest(sessions.message_count, excluded.message_count),
          updated_at = greatest(sessions.updated_at, excluded.updated_at),
          input_tokens = case when excluded.message_count > sessions.message_count then excluded.input_tokens else sessions.input_tokens end,
          output_tokens = case when excluded.message_count > sessions.message_count then excluded.output_tokens else sessions.output_tokens end,
          cache_read_tokens = case when excluded.message_count > sessions.message_count then excluded.cache_read_tokens else sessions.cache_read_tokens end,
          cache_write_tokens = case when excluded.message_count > sessions.message_count then excluded.cache_write_tokens else sessions.cache_write_tokens end,
          cost_usd = case when excluded.message_count > sessions.message_count then excluded.cost_usd else sessions.cost_usd end,
          unpriced_calls = case when excluded.message_count > sessions.message_count then excluded.unpriced_calls else sessions.unpriced_calls end
        returning (xmax = 0) as inserted`;
      report.sessions.copied += created.filter((row) => row.inserted === true).length;
      for (let start = 0; start < messages.length; start += 500) {
        const batch = messages.slice(start, start + 500);
        const rows = await tx`
          insert into session_messages (session_id, position, body)
          select ${session.sessionId}, position, body
          from unnest(${batch.map((_, index) => start + index + 1)}::int[], ${batch.map((message) => JSON.stringify(message))}::text[])
            as copied(position, body)
          on conflict (session_id, position) do nothing
          returning position`;
        report.messages.copied += rows.length;
      }
      // The next append takes the position after the count: it must be past every stored message.
      await tx`
        update sessions s set message_count = stored.last
        from (select coalesce(max(position), 0) as last from session_messages where session_id = ${session.sessionId}) stored
        where s.session_id = ${session.sessionId} and s.message_count < stored.last`;
      for (const prompt of queued) {
        const rows = await tx`
          insert into session_queue (session_id, message_id, body)
          values (${session.sessionId}, ${prompt.messageId}, ${JSON.stringify(prompt)})
          on conflict (session_id, message_id) do nothing returning message_id`;
        report.queuedPrompts.copied += rows.length;
      }
    });
    for (const sha256 of attachmentNames) {
      const data = await source.readAttachment(session.sessionId, sha256);
      if (data === undefined) continue;
      const rows = await sql`
        insert into session_attachments (session_id, sha256, data)
        values (${session.sessionId}, ${sha256}, ${Buffer.from(data)})
        on conflict (session_id, sha256) do nothing returning sha256`;
      report.attachments.copied += rows.length;
    }
  }
}

/**
 * Refuses a directory that is not a data dir (a typo would otherwise be created, and "copied" with
 * nothing in it): it has a `sessions/` directory or a `credentials.json`.
 */
async function checkIsDataDir(dataDir: string): Promise<void> {
  const found = await Promise.all(
    ['sessions', 'credentials.json'].map((name) =>
      stat(join(dataDir, name)).then(
        () => true,
        () => false,
      ),
    ),
  );
  if (!found.includes(true)) {
    const exists = await stat(dataDir).then(
      (info) => info.isDirectory(),
      () => false,
    );
    throw new MolfError(
      'invalid_input',
      exists
        ? `${dataDir} is not a Molf data directory (it has no sessions/ and no credentials.json)`
        : `${dataDir} does not exist`,
      { field: 'from-files' },
    );
  }
}

/** Checks a copy: the database holds at least what the data dir holds (it may hold more: a cluster's own). */
export function checkCopy(report: CopyReport): void {
  if (report.documents.conflicts.length > 0) {
    throw new MolfError(
      'conflict',
      `the database has its own ${report.documents.conflicts.join(', ')}, which differ from the data dir's: not copied. ` +
        'Merge them by hand (for tokens: molf token create --database …), or copy into a database without them',
    );
  }
  const short = (['sessions', 'messages', 'attachments', 'documents', 'auditRecords'] as const).filter(
    (what) => report[what].inDatabase < report[what].source,
  );
  if (short.length > 0) {
    throw new MolfError(
      'internal',
      `the database holds fewer ${short.join(', ')} than the data dir after the copy: ${short
        .map((what) => `${what} ${report[what].inDatabase} < ${report[what].source}`)
        .join('; ')}`,
    );
  }
}

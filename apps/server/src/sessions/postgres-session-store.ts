import { createHash, randomUUID } from 'node:crypto';
import type { Logger } from '@molf/logging';
import {
  MolfError,
  roundUsd,
  type SessionInfo,
  type SessionMessage,
  type UsageTotals,
  type WorkerId,
} from '@molf/protocol';
import type postgres from 'postgres';
import { type Database, failsAsUnavailable } from '../database/index.ts';
import { parseQueuedPrompt, type QueuedPrompt, type SessionStore } from './session-store.ts';
import { usageOfMessage } from './session-usage.ts';

/** A session's row with its subagents' usage beside it (the `child_` columns). */
type SessionRow = {
  session_id: string;
  worker_id: string;
  name: string;
  untitled: boolean;
  model: string | null;
  parent_session_id: string | null;
  parent_tool_call_id: string | null;
  parent_agent: string | null;
  created_at: Date;
  updated_at: Date;
  message_count: number;
  status: SessionInfo['status'];
  input_tokens: string;
  output_tokens: string;
  cache_read_tokens: string;
  cache_write_tokens: string;
  cost_usd: string | null;
  unpriced_calls: number;
  child_input_tokens: string | null;
  child_output_tokens: string | null;
  child_cache_read_tokens: string | null;
  child_cache_write_tokens: string | null;
  child_cost_usd: string | null;
  child_unpriced_calls: string | null;
};

function usageOf(row: SessionRow): UsageTotals {
  const sum = (own: string | number, child: string | null) => Number(own) + Number(child ?? 0);
  const usage: UsageTotals = {
    inputTokens: sum(row.input_tokens, row.child_input_tokens),
    outputTokens: sum(row.output_tokens, row.child_output_tokens),
  };
  const cacheRead = sum(row.cache_read_tokens, row.child_cache_read_tokens);
  const cacheWrite = sum(row.cache_write_tokens, row.child_cache_write_tokens);
  const unpriced = sum(row.unpriced_calls, row.child_unpriced_calls);
  if (cacheRead > 0) usage.cacheReadTokens = cacheRead;
  if (cacheWrite > 0) usage.cacheWriteTokens = cacheWrite;
  if (row.cost_usd !== null || row.child_cost_usd !== null) {
    usage.costUsd = roundUsd(Number(row.cost_usd ?? 0) + Number(row.child_cost_usd ?? 0));
  }
  if (unpriced > 0) usage.unpricedCalls = unpriced;
  return usage;
}

function toInfo(row: SessionRow): SessionInfo {
  return {
    sessionId: row.session_id,
    workerId: row.worker_id as WorkerId,
    name: row.name,
    ...(row.model === null ? {} : { model: row.model }),
    ...(row.parent_session_id === null
      ? {}
      : {
          parent: {
            sessionId: row.parent_session_id,
            toolCallId: row.parent_tool_call_id ?? '',
            agent: row.parent_agent ?? '',
          },
        }),
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    messageCount: row.message_count,
    status: row.status,
    usage: usageOf(row),
    ...(row.untitled ? { untitled: true } : {}),
  };
}

const notFound = (sessionId: string) =>
  new MolfError('session_not_found', `no session ${sessionId}`, { field: 'sessionId' });

/**
 * The JSON bodies of a session's rows, read with the session left-joined to them: no row at all is
 * a session that does not exist; one row without a body, a session that has none.
 */
function bodiesOf<T>(sessionId: string, rows: readonly { body: string | null }[]): T[] {
  if (rows.length === 0) throw notFound(sessionId);
  return rows.flatMap((row) => (row.body === null ? [] : [JSON.parse(row.body) as T]));
}

/** How much of a damaged queued prompt the log keeps. */
const DAMAGED_BODY_LOGGED = 4_000;

/** PostgreSQL's foreign key violation: the session a row belongs to is gone. */
const FOREIGN_KEY_VIOLATION = '23503';

/**
 * Sessions in PostgreSQL (`sessions`, `session_messages`, `session_queue`, `session_attachments`):
 * one row per message, each appended with its session's counters in one statement (a new message
 * costs one insert and one row update, whatever the history's length); listing reads only the
 * `sessions` rows, through the recency index. Message bodies are kept as their JSON text, exactly
 * as the file store keeps them. Every instance reads and writes the same rows; a query the database
 * cannot answer fails with `database_unavailable` and changes nothing.
 */
export function createPostgresSessionStore(options: {
  database: Database;
  /**
   * Set when several instances share the database: a message is stored only while this instance
   * holds the lease of the session (of its top session, for a subagent's), on the database's clock.
   * A write sent before the lease was lost and delivered after (a partition) is refused, so that
   * an instance that no longer runs a session never adds to its history. Default: no check.
   */
  fence?: { instanceId: string };
  /** Where a damaged queued prompt is logged as it is dropped. */
  logger?: Logger;
}): SessionStore {
  const { sql } = options.database;
  const { fence } = options;

  /**
   * Takes out of the queue prompts that cannot run (a torn or foreign row): kept, they would hold the
   * session busy for ever, every instance taking it and finding nothing to run. What they held is logged.
   */
  async function dropDamaged(sessionId: string, damaged: ReadonlyArray<{ messageId: string; body: string }>) {
    await sql`
      delete from session_queue
      where session_id = ${sessionId} and message_id = any(${damaged.map((prompt) => prompt.messageId)}::text[])`;
    for (const { messageId, body } of damaged) {
      options.logger?.error(
        { sessionId, messageId, body: body.slice(0, DAMAGED_BODY_LOGGED) },
        'dropped a damaged queued prompt: it cannot run',
      );
    }
  }

  /** The lease check of a write to a session: an append, a status (nothing without a fence). */
  const holdsLease = (sessionId: string) =>
    fence === undefined
      ? sql``
      : sql`and exists (
          with recursive chain as (
            select session_id, parent_session_id from sessions where session_id = ${sessionId}
            union all
            select parent.session_id, parent.parent_session_id from sessions parent
            join chain on parent.session_id = chain.parent_session_id
          )
          select 1 from chain join session_leases lease on lease.session_id = chain.session_id
          where chain.parent_session_id is null and lease.instance_id = ${fence.instanceId}
            and lease.expires_at > now()
        )`;

  /**
   * A prompt stored in the history is no longer waiting: it leaves the queue in the append's statement
   * (only when the append is), so that a crash between the two cannot leave it in both and run it again.
   */
  const dequeuedWith = (sessionId: string, messageId: string) => sql`
    , dequeued as (
      delete from session_queue
      where session_id = ${sessionId} and message_id = ${messageId} and exists (select 1 from counted)
    )`;

  /** A session with its subagents' usage summed beside it. */
  const selectSessions = (where: postgres.PendingQuery<postgres.Row[]>) => sql<SessionRow[]>`
    select s.*, c.*
    from sessions s
    left join lateral (
      select sum(input_tokens) as child_input_tokens, sum(output_tokens) as child_output_tokens,
        sum(cache_read_tokens) as child_cache_read_tokens, sum(cache_write_tokens) as child_cache_write_tokens,
        sum(cost_usd) as child_cost_usd, sum(unpriced_calls) as child_unpriced_calls
      from sessions child where child.parent_session_id = s.session_id
    ) c on true
    ${where}`;

  async function getRow(sessionId: string): Promise<SessionRow | undefined> {
    const [row] = await selectSessions(sql`where s.session_id = ${sessionId}`);
    return row;
  }

  const store: SessionStore = {
    create: ({ workerId, name, model, parent }) =>
      failsAsUnavailable(async () => {
        const now = new Date();
        const sessionId = randomUUID();
        await sql`
          insert into sessions (session_id, worker_id, name, untitled, model, parent_session_id,
            parent_tool_call_id, parent_agent, created_at, updated_at)
          values (${sessionId}, ${workerId}, ${name ?? `Session ${now.toISOString().slice(0, 16).replace('T', ' ')}`},
            ${name === undefined}, ${model ?? null}, ${parent?.sessionId ?? null}, ${parent?.toolCallId ?? null},
            ${parent?.agent ?? null}, ${now}, ${now})`;
        const row = await getRow(sessionId);
        if (row === undefined) throw notFound(sessionId);
        return toInfo(row);
      }),

    get: (sessionId) =>
      failsAsUnavailable(async () => {
        const row = await getRow(sessionId);
        return row === undefined ? undefined : toInfo(row);
      }),

    list: ({ workerId, name, parentSessionId, topLevel, limit, offset }) =>
      failsAsUnavailable(async () => {
        const byWorker = workerId === undefined ? sql`true` : sql`s.worker_id = ${workerId}`;
        const byParent = parentSessionId === undefined ? sql`true` : sql`s.parent_session_id = ${parentSessionId}`;
        const byLevel = topLevel === true ? sql`s.parent_session_id is null` : sql`true`;
        const byName = name === undefined ? sql`true` : sql`strpos(lower(s.name), ${name.toLowerCase()}) > 0`;
        const where = sql`where ${byWorker} and ${byParent} and ${byLevel} and ${byName}`;
        const [rows, [count]] = await Promise.all([
          selectSessions(sql`${where} order by s.updated_at desc, s.session_id limit ${limit} offset ${offset}`),
          sql<{ total: string }[]>`select count(*) as total from sessions s ${where}`,
        ]);
        return { sessions: rows.map(toInfo), total: Number(count?.total ?? 0), damaged: [] };
      }),

    messages: (sessionId) =>
      failsAsUnavailable(async () => {
        const rows = await sql<{ body: string | null }[]>`
          select m.body from sessions s
          left join session_messages m on m.session_id = s.session_id
          where s.session_id = ${sessionId}
          order by m.position`;
        return bodiesOf<SessionMessage>(sessionId, rows);
      }),

    append: (sessionId, message) =>
      failsAsUnavailable(async () => {
        const usage = usageOfMessage(message);
        const priced = usage?.costUsd !== undefined;
        // One statement: the session's counters move and the message takes the next position together.
        const rows = await sql`
          with counted as (
            update sessions set
              message_count = message_count + 1,
              updated_at = ${new Date(message.at)},
              input_tokens = input_tokens + ${usage?.inputTokens ?? 0},
              output_tokens = output_tokens + ${usage?.outputTokens ?? 0},
              cache_read_tokens = cache_read_tokens + ${usage?.cacheReadTokens ?? 0},
              cache_write_tokens = cache_write_tokens + ${usage?.cacheWriteTokens ?? 0},
              cost_usd = case when ${priced} then coalesce(cost_usd, 0) + ${usage?.costUsd ?? 0} else cost_usd end,
              unpriced_calls = unpriced_calls + ${usage !== undefined && !priced ? 1 : 0}
            where session_id = ${sessionId} ${holdsLease(sessionId)}
            returning message_count
          )
          ${message.role === 'user' ? dequeuedWith(sessionId, message.id) : sql``}
          insert into session_messages (session_id, position, body)
          select ${sessionId}, message_count, ${JSON.stringify(message)} from counted
          returning position`;
        if (rows.length > 0) return;
        if (fence !== undefined && (await sql`select 1 from sessions where session_id = ${sessionId}`).length > 0) {
          throw new MolfError(
            'conflict',
            `this server no longer runs session ${sessionId} (another took it over): the message was not stored`,
          );
        }
        throw notFound(sessionId);
      }),

    enqueue: (sessionId, prompt: QueuedPrompt) =>
      failsAsUnavailable(async () => {
        try {
          await sql`
            insert into session_queue (session_id, message_id, body)
            values (${sessionId}, ${prompt.messageId}, ${JSON.stringify(prompt)})
            on conflict (session_id, message_id) do nothing`;
        } catch (error) {
          if ((error as { code?: string }).code === FOREIGN_KEY_VIOLATION) throw notFound(sessionId);
          throw error;
        }
      }),

    dequeue: (sessionId, messageId) =>
      failsAsUnavailable(async () => {
        await sql`delete from session_queue where session_id = ${sessionId} and message_id = ${messageId}`;
      }),

    queued: (sessionId) =>
      failsAsUnavailable(async () => {
        const rows = await sql<{ message_id: string | null; body: string | null }[]>`
          select q.message_id, q.body from sessions s
          left join session_queue q on q.session_id = s.session_id
          where s.session_id = ${sessionId}
          order by q.queued`;
        if (rows.length === 0) throw notFound(sessionId);
        const prompts: QueuedPrompt[] = [];
        const damaged: Array<{ messageId: string; body: string }> = [];
        for (const { message_id: messageId, body } of rows) {
          if (messageId === null || body === null) continue;
          const prompt = parseQueuedPrompt(body);
          if (prompt === undefined) damaged.push({ messageId, body });
          else prompts.push(prompt);
        }
        if (damaged.length > 0) await dropDamaged(sessionId, damaged);
        return prompts;
      }),

    update: (sessionId, change) =>
      failsAsUnavailable(async () => {
        const name = change.name ?? null;
        const title = change.title ?? null;
        const updated = await sql`
          update sessions set
            name = coalesce(${name}::text, case when untitled then ${title}::text end, name),
            untitled = untitled and ${name}::text is null and ${title}::text is null,
            model = coalesce(${change.model ?? null}::text, model),
            updated_at = ${new Date()}
          where session_id = ${sessionId}
          returning session_id`;
        const row = updated.length === 0 ? undefined : await getRow(sessionId);
        if (row === undefined) throw notFound(sessionId);
        return toInfo(row);
      }),

    putAttachment: (sessionId, data) =>
      failsAsUnavailable(async () => {
        const sha256 = createHash('sha256').update(data).digest('hex');
        try {
          await sql`
            insert into session_attachments (session_id, sha256, data)
            values (${sessionId}, ${sha256}, ${Buffer.from(data.buffer, data.byteOffset, data.byteLength)})
            on conflict (session_id, sha256) do nothing`;
        } catch (error) {
          if ((error as { code?: string }).code === FOREIGN_KEY_VIOLATION) throw notFound(sessionId);
          throw error;
        }
        return sha256;
      }),

    readAttachment: (sessionId, sha256) =>
      failsAsUnavailable(async () => {
        const rows = await sql<{ data: Buffer | null }[]>`
          select a.data from sessions s
          left join session_attachments a on a.session_id = s.session_id and a.sha256 = ${sha256}
          where s.session_id = ${sessionId}`;
        if (rows.length === 0) throw notFound(sessionId);
        const data = rows[0]?.data;
        return data === null || data === undefined ? undefined : new Uint8Array(data);
      }),

    setStatus: (sessionId, status) =>
      failsAsUnavailable(async () => {
        // Fenced as an append: a status sent before the lease was lost must not land in the turn of
        // the instance that took the session (a late idle would mark its turn as finished).
        const rows = await sql`
          update sessions set status = ${status} where session_id = ${sessionId} ${holdsLease(sessionId)}
          returning 1`;
        if (rows.length > 0 || fence === undefined) return;
        if ((await sql`select 1 from sessions where session_id = ${sessionId}`).length > 0) {
          throw new MolfError(
            'conflict',
            `this server no longer runs session ${sessionId} (another took it over): its status was not stored`,
          );
        }
      }),

    // Nothing is kept ready per session: every read is the database's.
    idle: async () => {},

    delete: (sessionId) =>
      failsAsUnavailable(async () => {
        const rows = await sql`delete from sessions where session_id = ${sessionId} returning session_id`;
        if (rows.length === 0) throw notFound(sessionId);
      }),

    // The pool is the database's, closed by its owner.
    close: async () => {},
  };
  return store;
}

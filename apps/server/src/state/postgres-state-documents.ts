import { AsyncLocalStorage } from 'node:async_hooks';
import type { Logger } from '@molf/logging';
import { MolfError } from '@molf/protocol';
import { type Database, describeDatabaseError } from '../database/index.ts';
import { createTurnsByKey } from '../turns-by-key.ts';
import type { StateDocuments } from './state-documents.ts';

/** The channel every instance listens on; a payload is a document's name. */
export const DOCUMENTS_CHANNEL = 'molf_state_documents';
/** How long `lock` waits for another holder, as the file locks do. */
const LOCK_TIMEOUT = '20s';
/** A change is told to watchers this long after it is announced, as the file watch settles. */
const WATCH_SETTLE_MS = 100;

type Copy = { content: Buffer; version: string };

/**
 * Documents as rows of `state_documents`, shared by every instance on the database. Each instance
 * keeps a copy of all of them (they are small) for `known`, loaded at open and kept current by the
 * `NOTIFY` every write sends in its own statement; after the link to the database comes back, all
 * are read again. A lock is an advisory lock held on a connection of its own, so that an instance
 * that dies holding one lets go of it with its connection. The holder's own reads and writes of
 * documents go through that connection, and at most half the pool is held by locks at once: many
 * locks taken together (a dozen workers registering) never leave their holders without a connection.
 */
export async function openPostgresStateDocuments(options: {
  database: Database;
  logger: Logger;
}): Promise<StateDocuments> {
  const { sql, name: databaseName } = options.database;
  /** The connection of the lock whose task is running, while it holds the lock. */
  const lockConnection = new AsyncLocalStorage<{ connection: typeof sql; held: boolean }>();
  /** The connection a document query uses: the lock's, inside a lock's task; else the pool. */
  const db = (): typeof sql => {
    const lock = lockConnection.getStore();
    return lock?.held === true ? lock.connection : sql;
  };
  /** Connections locks may hold at once; the others stay for queries. */
  let lockSlots = Math.max(1, Math.floor(options.database.maxConnections / 2));
  const waitingForSlot: Array<() => void> = [];
  const copies = new Map<string, Copy>();
  const watchers = new Map<string, Set<() => void>>();
  const timers = new Set<NodeJS.Timeout>();
  let closed = false;

  const prefixWatchers = new Set<{ prefix: string; onChange: (name: string) => void }>();

  function changed(name: string): void {
    for (const watcher of prefixWatchers) {
      if (!name.startsWith(watcher.prefix)) continue;
      const timer = setTimeout(() => {
        timers.delete(timer);
        if (!closed) watcher.onChange(name);
      }, WATCH_SETTLE_MS);
      timers.add(timer);
    }
    for (const onChange of watchers.get(name) ?? []) {
      const timer = setTimeout(() => {
        timers.delete(timer);
        if (!closed) onChange();
      }, WATCH_SETTLE_MS);
      timers.add(timer);
    }
  }

  function keep(name: string, copy: Copy | undefined): void {
    const before = copies.get(name);
    if (copy === undefined) copies.delete(name);
    else copies.set(name, copy);
    if (before?.version !== copy?.version) changed(name);
  }

  /**
   * Each document's count of changes this opener made. A read begun before one of them may land
   * after it with the text before it (the read-back of an earlier change's announcement, on another
   * connection): it is read again rather than kept over the newer copy.
   */
  const changedHere = new Map<string, number>();
  function keepOwn(name: string, copy: Copy | undefined): void {
    changedHere.set(name, (changedHere.get(name) ?? 0) + 1);
    keep(name, copy);
  }

  async function fetch(name: string): Promise<Copy | undefined> {
    for (;;) {
      const before = changedHere.get(name) ?? 0;
      const [row] = await db()<{ content: Buffer; version: string }[]>`
        select content, version from state_documents where name = ${name}`;
      if ((changedHere.get(name) ?? 0) !== before) continue;
      const copy = row === undefined ? undefined : { content: row.content, version: String(row.version) };
      keep(name, copy);
      return copy;
    }
  }

  async function loadAll(): Promise<void> {
    const rows = await sql<{ name: string; content: Buffer; version: string }[]>`
      select name, content, version from state_documents`;
    const seen = new Set<string>();
    for (const row of rows) {
      seen.add(row.name);
      keep(row.name, { content: row.content, version: String(row.version) });
    }
    for (const name of [...copies.keys()]) if (!seen.has(name)) keep(name, undefined);
  }

  await loadAll();
  let first = true;
  const listening = await sql.listen(
    DOCUMENTS_CHANNEL,
    (name) => {
      fetch(name).catch((error: unknown) =>
        options.logger.warn({ err: error, name }, 'cannot read a changed document'),
      );
    },
    () => {
      // Called again after each reconnect: changes announced meanwhile were missed.
      if (!first)
        loadAll().catch((error: unknown) => options.logger.warn({ err: error }, 'cannot read the documents again'));
      first = false;
    },
  );

  async function lockAndRun<T>(name: string, task: () => Promise<T>): Promise<T> {
    // A lock taken inside another's task (a pairing code redeemed makes a credential) rides on the
    // outer one's slot: waiting for a slot of its own could wait for itself.
    if (lockConnection.getStore()?.held === true) return lockOnOwnConnection(name, task);
    if (lockSlots === 0) await new Promise<void>((resolveSlot) => waitingForSlot.push(resolveSlot));
    else lockSlots -= 1;
    try {
      return await lockOnOwnConnection(name, task);
    } finally {
      const next = waitingForSlot.shift();
      if (next === undefined) lockSlots += 1;
      else next();
    }
  }

  async function lockOnOwnConnection<T>(name: string, task: () => Promise<T>): Promise<T> {
    const reserved = await sql.reserve();
    try {
      try {
        await reserved.unsafe(`set lock_timeout = '${LOCK_TIMEOUT}'`);
        await reserved`select pg_advisory_lock(hashtextextended(${`molf:document:${name}`}, 0))`;
      } catch (error) {
        if ((error as { code?: string }).code === '55P03') {
          throw new MolfError(
            'busy',
            `${name} is locked by another Molf server on the database ${databaseName}: try again`,
            { cause: error },
          );
        }
        throw new MolfError('database_unavailable', `cannot lock ${name}: ${describeDatabaseError(error)}`, {
          cause: error,
        });
      }
      const lock = { connection: reserved as unknown as typeof sql, held: true };
      try {
        return await lockConnection.run(lock, task);
      } finally {
        lock.held = false;
        await reserved`select pg_advisory_unlock(hashtextextended(${`molf:document:${name}`}, 0))`.catch(() => {
          // The connection is gone, and the lock with it.
        });
        await reserved.unsafe('reset lock_timeout').catch(() => undefined);
      }
    } finally {
      reserved.release();
    }
  }

  /** Each name's lock turns in this process. */
  const inTurn = createTurnsByKey();

  const bytes = (content: string | Uint8Array) =>
    typeof content === 'string' ? Buffer.from(content, 'utf8') : Buffer.from(content);

  return {
    where: (name) => `${name} in the database ${databaseName}`,

    async read(name) {
      return (await fetch(name))?.content.toString('utf8');
    },

    async readBytes(name) {
      return (await fetch(name))?.content;
    },

    known(name) {
      const copy = copies.get(name);
      return copy === undefined
        ? { text: undefined, version: 'none' }
        : { text: copy.content.toString('utf8'), version: copy.version };
    },

    async write(name, content) {
      const [row] = await db()<{ version: string }[]>`
        with written as (
          insert into state_documents (name, content) values (${name}, ${bytes(content)})
          on conflict (name) do update set content = excluded.content,
            version = state_documents.version + 1, updated_at = now()
          returning version
        )
        select version, pg_notify(${DOCUMENTS_CHANNEL}, ${name}) from written`;
      keepOwn(name, { content: bytes(content), version: String(row?.version) });
    },

    async create(name, content) {
      const rows = await db()<{ version: string }[]>`
        with created as (
          insert into state_documents (name, content) values (${name}, ${bytes(content)})
          on conflict (name) do nothing
          returning version
        )
        select version, pg_notify(${DOCUMENTS_CHANNEL}, ${name}) from created`;
      if (rows.length === 0) return false;
      keepOwn(name, { content: bytes(content), version: String(rows[0]?.version) });
      return true;
    },

    async remove(name) {
      await db()`
        with removed as (delete from state_documents where name = ${name} returning name)
        select pg_notify(${DOCUMENTS_CHANNEL}, name) from removed`;
      keepOwn(name, undefined);
    },

    // One turn at a time per name within this process: waiting turns hold no connection.
    lock: (name, task) => inTurn(name, () => lockAndRun(name, task)),

    async list(prefix) {
      const rows = await db()<{ name: string }[]>`
        select name from state_documents where left(name, ${prefix.length}) = ${prefix} order by name collate "C"`;
      return rows.map((row) => row.name);
    },

    watch(name, onChange) {
      const set = watchers.get(name) ?? new Set();
      set.add(onChange);
      watchers.set(name, set);
      return () => {
        set.delete(onChange);
        if (set.size === 0) watchers.delete(name);
      };
    },

    watchPrefix(prefix, onChange) {
      const watcher = { prefix, onChange };
      prefixWatchers.add(watcher);
      return () => {
        prefixWatchers.delete(watcher);
      };
    },

    async close() {
      closed = true;
      prefixWatchers.clear();
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      watchers.clear();
      await listening.unlisten().catch(() => undefined);
    },
  };
}

import { createHash, randomUUID } from 'node:crypto';
import { type FileHandle, mkdir, open, readdir, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '@molf/logging';
import {
  addCallUsage,
  addUsageTotals,
  type DamagedSession,
  emptyUsageTotals,
  MolfError,
  type SessionInfo,
  UsageTotalsSchema,
  type WorkerId,
} from '@molf/protocol';
import writeFileAtomic from 'write-file-atomic';
import { z } from 'zod';
import { createHistoryCache } from './history-cache.ts';
import { type HistoryHeader, readHistoryFile } from './read-history-file.ts';
import { createRecencyOrder } from './recency-order.ts';
import { parseQueuedPrompt, type QueuedPrompt, type SessionStore } from './session-store.ts';
import { sumMessageUsage, usageOfMessage } from './session-usage.ts';

const StoredMetaSchema = z.object({
  sessionId: z.string(),
  workerId: z.string(),
  name: z.string(),
  model: z.string().optional(),
  /** Set on a subagent's session. */
  parent: z.object({ sessionId: z.string(), toolCallId: z.string(), agent: z.string() }).optional(),
  createdAt: z.string(),
  updatedAt: z.string(),
  messageCount: z.number().int(),
  /**
   * The session's own model calls (not its subagents'), counted as their messages are stored;
   * absent in metadata written before usage was counted, until the history is read.
   */
  usage: UsageTotalsSchema.optional(),
  /** Set while the name is the one given at creation (see `SessionInfo.untitled`). */
  untitled: z.literal(true).optional(),
});
type StoredMeta = z.infer<typeof StoredMetaSchema>;

type Entry = {
  meta: StoredMeta;
  status: SessionInfo['status'];
  /** The open history file, kept while the session is in use. */
  handle: FileHandle | undefined;
  /** Appends and metadata writes of this session, one after another. */
  queue: Promise<unknown>;
  metaDirty: boolean;
  /** Whether the stored metadata was checked against the history since the start. */
  checked: boolean;
  /** The name in lower case, for the name filter (kept, not made at every listing). */
  searchName: string;
};

/** Metadata (name, counts, times) is written at most this often; messages are written at once. */
const META_FLUSH_MS = 1_000;
/** How often idle histories are looked at for eviction. */
const HISTORY_SWEEP_MS = 60_000;

export type FileSessionStoreOptions = {
  dataDir: string;
  logger: Logger;
  /** Parsed histories kept in memory for live sessions (see `createHistoryCache`). */
  historyCache?: { maxSize?: number; idleMs?: number };
};

/**
 * Sessions under `{dataDir}/sessions/{id}/`: `messages.jsonl`, the history — a header line naming the
 * session and its worker, then one message per line, appended and synced as each message completes
 * (a new message costs O(1); a crash loses at most the message being written) — and `meta.json`
 * (small, rewritten atomically, at most once a second), and `attachments/{sha256}`, the images and
 * documents of tool results, each kept once by content. The history is the truth: a session whose
 * metadata is unreadable is rebuilt from it. Listing reads only the metadata, all loaded at start;
 * the histories of live sessions are kept parsed in memory, so a turn does not re-read them.
 */
export async function openFileSessionStore(options: FileSessionStoreOptions): Promise<SessionStore> {
  const root = join(options.dataDir, 'sessions');
  await mkdir(root, { recursive: true, mode: 0o700 });
  const { logger } = options;
  const entries = new Map<string, Entry>();
  const damaged = new Map<string, string>();
  const cache = createHistoryCache(options.historyCache ?? {});
  const sweep = setInterval(() => cache.sweep(), HISTORY_SWEEP_MS);
  sweep.unref();

  const historyPath = (sessionId: string) => join(root, sessionId, 'messages.jsonl');

  async function writeMeta(entry: Entry): Promise<void> {
    entry.metaDirty = false;
    await writeFileAtomic(join(root, entry.meta.sessionId, 'meta.json'), `${JSON.stringify(entry.meta)}\n`, {
      mode: 0o600,
    });
  }

  function newEntry(meta: StoredMeta): Entry {
    return {
      meta,
      status: 'idle',
      handle: undefined,
      queue: Promise.resolve(),
      metaDirty: false,
      checked: false,
      searchName: meta.name.toLowerCase(),
    };
  }

  /** Loads one session's metadata, or rebuilds it from the history; undefined marks it damaged. */
  async function load(name: string): Promise<void> {
    let metaError: Error;
    try {
      const meta = StoredMetaSchema.parse(JSON.parse(await readFile(join(root, name, 'meta.json'), 'utf8')));
      entries.set(meta.sessionId, newEntry(meta));
      return;
    } catch (error) {
      metaError = error as Error;
    }
    const because = `its meta.json cannot be read (${metaError.message.split('\n')[0]})`;
    let header: HistoryHeader | undefined;
    let rebuilt: StoredMeta;
    try {
      const history = await readHistoryFile(historyPath(name));
      header = history.header;
      if (header === undefined || header.sessionId !== name) {
        damaged.set(name, `${because}, and its history does not say which worker it belongs to`);
        logger.error({ session: name, reason: damaged.get(name) }, 'a stored session is damaged and cannot be used');
        return;
      }
      rebuilt = {
        sessionId: name,
        workerId: header.workerId,
        name: header.name,
        ...(header.model === undefined ? {} : { model: header.model }),
        ...(header.parent === undefined ? {} : { parent: header.parent }),
        createdAt: header.createdAt,
        updatedAt: history.messages.at(-1)?.at ?? header.createdAt,
        messageCount: history.messages.length,
        usage: sumMessageUsage(history.messages),
      };
    } catch (error) {
      damaged.set(name, `${because}, and its history cannot be read (${(error as Error).message})`);
      logger.error({ session: name, reason: damaged.get(name) }, 'a stored session is damaged and cannot be used');
      return;
    }
    const entry = newEntry(rebuilt);
    entry.checked = true;
    entries.set(name, entry);
    await writeMeta(entry).catch((error: unknown) => {
      logger.error({ err: error, sessionId: name }, 'cannot write the rebuilt session metadata');
    });
    logger.warn(
      { sessionId: name, reason: because },
      'session metadata rebuilt from its history (a rename or model change made after its creation is lost)',
    );
  }

  // Only the small metadata files are read at start, 64 at a time.
  const names = await readdir(root);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(64, names.length) }, async () => {
      while (next < names.length) await load(names[next++] as string);
    }),
  );

  /** Sessions newest first, sorted once here and kept so as they change (listing never sorts). */
  const ordered = createRecencyOrder<Entry>({ timeOf: (entry) => entry.meta.updatedAt, initial: entries.values() });

  /** Subagents' sessions by their parent's id: a session's usage includes theirs. */
  const children = new Map<string, Set<Entry>>();
  const addChild = (entry: Entry) => {
    const parentId = entry.meta.parent?.sessionId;
    if (parentId === undefined) return;
    const set = children.get(parentId) ?? new Set<Entry>();
    set.add(entry);
    children.set(parentId, set);
  };
  const removeChild = (entry: Entry) => {
    const parentId = entry.meta.parent?.sessionId;
    if (parentId === undefined) return;
    const set = children.get(parentId);
    set?.delete(entry);
    if (set?.size === 0) children.delete(parentId);
  };
  for (const entry of entries.values()) addChild(entry);

  /**
   * The session's usage with its subagents': unknown while its own is (stored before usage was
   * counted); a subagent's session whose usage is unknown is left out.
   */
  function usageOf(entry: Entry): SessionInfo['usage'] {
    const own = entry.meta.usage;
    if (own === undefined) return undefined;
    let total = own;
    for (const child of children.get(entry.meta.sessionId) ?? []) {
      if (child.meta.usage !== undefined) total = addUsageTotals(total, child.meta.usage);
    }
    return total;
  }

  let flushTimer: NodeJS.Timeout | undefined;
  function scheduleMetaFlush(): void {
    flushTimer ??= setTimeout(() => {
      flushTimer = undefined;
      void flushMeta();
    }, META_FLUSH_MS);
    flushTimer.unref();
  }

  function enqueue<T>(entry: Entry, task: () => Promise<T>): Promise<T> {
    const next = entry.queue.then(task, task);
    entry.queue = next.catch(() => undefined);
    return next;
  }

  async function flushMeta(): Promise<void> {
    await Promise.all(
      [...entries.values()]
        .filter((entry) => entry.metaDirty)
        .map((entry) =>
          enqueue(entry, () => writeMeta(entry)).catch((error: unknown) =>
            logger.error({ err: error, sessionId: entry.meta.sessionId }, 'cannot write session metadata'),
          ),
        ),
    );
  }

  function toInfo(entry: Entry): SessionInfo {
    const { usage: _own, ...meta } = entry.meta;
    const usage = usageOf(entry);
    return {
      ...meta,
      workerId: entry.meta.workerId as WorkerId,
      status: entry.status,
      ...(usage === undefined ? {} : { usage }),
    };
  }

  function entryOf(sessionId: string): Entry {
    const entry = entries.get(sessionId);
    if (entry !== undefined) return entry;
    const reason = damaged.get(sessionId);
    if (reason !== undefined) throw new MolfError('session_damaged', `session ${sessionId} is damaged: ${reason}`);
    throw new MolfError('session_not_found', `no session ${sessionId}`, { field: 'sessionId' });
  }

  /** Opens the history file for appending, ending a line a crash may have torn first. */
  async function openHistory(sessionId: string): Promise<FileHandle> {
    const path = historyPath(sessionId);
    const handle = await open(path, 'a', 0o600);
    // A crash may have left half a line: end it, so that the next message starts a line of its own
    // (the torn one is then skipped on reading) instead of being glued to the garbage.
    const { size } = await handle.stat();
    if (size > 0) {
      const last = Buffer.alloc(1);
      const reader = await open(path, 'r');
      try {
        await reader.read(last, 0, 1, size - 1);
      } finally {
        await reader.close();
      }
      if (last[0] !== 0x0a) await handle.appendFile('\n');
    }
    return handle;
  }

  async function readHistory(entry: Entry) {
    const { sessionId } = entry.meta;
    const history = await readHistoryFile(historyPath(sessionId));
    for (const line of history.skipped) {
      // Only the last line can be torn by a crash; anything else is damage worth a warning too.
      logger.warn({ sessionId, line }, 'skipping an unreadable session message');
    }
    const { messages } = history;
    // The metadata is written lazily: after a crash it may lag behind the messages.
    const lastAt = messages.at(-1)?.at;
    const lagging = entry.meta.messageCount !== messages.length;
    if (lagging || entry.meta.usage === undefined) {
      // Counted once from the whole history: for a session stored before usage was counted, or
      // when the metadata lags behind the messages (it may lag by a counted message too).
      entry.meta.usage = sumMessageUsage(messages);
      entry.metaDirty = true;
      scheduleMetaFlush();
    }
    if (lagging || (lastAt !== undefined && lastAt > entry.meta.updatedAt)) {
      entry.meta.messageCount = messages.length;
      if (lastAt !== undefined && lastAt > entry.meta.updatedAt) entry.meta.updatedAt = lastAt;
      ordered.moved(entry);
      entry.metaDirty = true;
      scheduleMetaFlush();
    }
    entry.checked = true;
    return history;
  }

  /** Takes a prompt out of the session's queue file (removed once empty); none such, nothing changes. */
  async function removeQueued(sessionId: string, messageId: string): Promise<void> {
    const path = join(root, sessionId, 'queue.jsonl');
    const text = await readFile(path, 'utf8').catch(() => undefined);
    if (text === undefined) return;
    const lines = text.split('\n').filter((line) => line.trim() !== '');
    const rest = lines.filter((line) => !line.includes(`"messageId":${JSON.stringify(messageId)}`));
    if (rest.length === lines.length && rest.length > 0) return;
    if (rest.length === 0) await rm(path, { force: true });
    else await writeFileAtomic(path, `${rest.join('\n')}\n`, { mode: 0o600 });
  }

  const store: SessionStore = {
    async create({ workerId, name, model, parent }) {
      const sessionId = randomUUID();
      const now = new Date().toISOString();
      const meta: StoredMeta = {
        sessionId,
        workerId,
        name: name ?? `Session ${now.slice(0, 16).replace('T', ' ')}`,
        ...(name === undefined ? { untitled: true as const } : {}),
        ...(model === undefined ? {} : { model }),
        ...(parent === undefined ? {} : { parent }),
        createdAt: now,
        updatedAt: now,
        messageCount: 0,
        usage: emptyUsageTotals(),
      };
      await mkdir(join(root, sessionId), { recursive: true, mode: 0o700 });
      const header: HistoryHeader = {
        kind: 'session',
        sessionId,
        workerId,
        name: meta.name,
        ...(model === undefined ? {} : { model }),
        ...(parent === undefined ? {} : { parent }),
        createdAt: now,
      };
      const handle = await open(historyPath(sessionId), 'wx', 0o600);
      try {
        await handle.appendFile(`${JSON.stringify(header)}\n`);
        await handle.datasync();
      } finally {
        await handle.close();
      }
      const entry = newEntry(meta);
      entry.checked = true;
      await writeMeta(entry);
      entries.set(sessionId, entry);
      cache.set(sessionId, { messages: [], size: 0, inUse: false });
      ordered.add(entry);
      addChild(entry);
      return toInfo(entry);
    },

    async get(sessionId) {
      const entry = entries.get(sessionId);
      if (entry !== undefined) return toInfo(entry);
      const reason = damaged.get(sessionId);
      if (reason !== undefined) throw new MolfError('session_damaged', `session ${sessionId} is damaged: ${reason}`);
      return undefined;
    },

    async list({ workerId, name, parentSessionId, topLevel, limit, offset }) {
      const needle = name?.toLowerCase();
      const all = ordered.items();
      const damagedList: DamagedSession[] = [...damaged].map(([sessionId, reason]) => ({ sessionId, reason }));
      if (workerId === undefined && needle === undefined && parentSessionId === undefined && topLevel !== true) {
        return { sessions: all.slice(offset, offset + limit).map(toInfo), total: all.length, damaged: damagedList };
      }
      // One pass that counts the matches and keeps only the page's: no copy of the matching list.
      const page: SessionInfo[] = [];
      let total = 0;
      for (const entry of all) {
        const { meta } = entry;
        if (
          (workerId !== undefined && meta.workerId !== workerId) ||
          (parentSessionId !== undefined && meta.parent?.sessionId !== parentSessionId) ||
          (topLevel === true && meta.parent !== undefined) ||
          (needle !== undefined && !entry.searchName.includes(needle))
        ) {
          continue;
        }
        if (total >= offset && page.length < limit) page.push(toInfo(entry));
        total += 1;
      }
      return { sessions: page, total, damaged: damagedList };
    },

    async messages(sessionId) {
      const entry = entryOf(sessionId);
      // In the session's queue: a reader sees every message it was told about, and an append can't
      // land between reading the file and keeping what was read (the kept history would miss it).
      return enqueue(entry, async () => {
        const kept = cache.get(sessionId);
        if (kept !== undefined && entry.checked) return kept.slice();
        const history = await readHistory(entry);
        cache.set(sessionId, { messages: history.messages, size: history.size, inUse: entry.status === 'busy' });
        return history.messages.slice();
      });
    },

    async enqueue(sessionId, prompt: QueuedPrompt) {
      const entry = entryOf(sessionId);
      return enqueue(entry, async () => {
        const handle = await open(join(root, sessionId, 'queue.jsonl'), 'a', 0o600);
        try {
          await handle.appendFile(`${JSON.stringify(prompt)}\n`);
          await handle.datasync();
        } finally {
          await handle.close();
        }
      });
    },

    async dequeue(sessionId, messageId) {
      const entry = entryOf(sessionId);
      return enqueue(entry, () => removeQueued(sessionId, messageId));
    },

    async queued(sessionId) {
      const entry = entryOf(sessionId);
      return enqueue(entry, async () => {
        const text = await readFile(join(root, sessionId, 'queue.jsonl'), 'utf8').catch(() => '');
        // A torn line (a crash mid-write) or one that is no prompt cannot run: passed over.
        return text.split('\n').flatMap((line) => {
          const prompt = line.trim() === '' ? undefined : parseQueuedPrompt(line);
          return prompt === undefined ? [] : [prompt];
        });
      });
    },

    async append(sessionId, message) {
      const entry = entryOf(sessionId);
      const line = `${JSON.stringify(message)}\n`;
      return enqueue(entry, async () => {
        entry.handle ??= await openHistory(sessionId);
        await entry.handle.appendFile(line);
        await entry.handle.datasync();
        cache.append(sessionId, message, line.length);
        if (entry.meta.usage !== undefined) entry.meta.usage = addCallUsage(entry.meta.usage, usageOfMessage(message));
        entry.meta.messageCount += 1;
        entry.meta.updatedAt = message.at;
        ordered.moved(entry);
        entry.metaDirty = true;
        scheduleMetaFlush();
        // A prompt stored as a message has left the queue (as on PostgreSQL, where it is one statement).
        // The message is stored either way: a queue file that cannot be rewritten is told, not thrown.
        if (message.role === 'user') {
          await removeQueued(sessionId, message.id).catch((error: unknown) =>
            logger.warn({ err: error, sessionId }, 'cannot take a stored prompt out of the queue file'),
          );
        }
      });
    },

    async update(sessionId, change) {
      const entry = entryOf(sessionId);
      // A title takes only while the session has its default name: a person's name stays.
      const name = change.name ?? (entry.meta.untitled === true ? change.title : undefined);
      if (name !== undefined) {
        entry.meta.name = name;
        entry.searchName = name.toLowerCase();
        delete entry.meta.untitled;
      }
      if (change.model !== undefined) entry.meta.model = change.model;
      entry.meta.updatedAt = new Date().toISOString();
      ordered.moved(entry);
      await enqueue(entry, () => writeMeta(entry));
      return toInfo(entry);
    },

    async putAttachment(sessionId, data) {
      entryOf(sessionId);
      const sha256 = createHash('sha256').update(data).digest('hex');
      const directory = join(root, sessionId, 'attachments');
      await mkdir(directory, { recursive: true, mode: 0o700 });
      const path = join(directory, sha256);
      // Content-addressed: the same bytes are kept once, and a file already there is already right.
      const present = await stat(path).then(
        (info) => info.size === data.byteLength,
        () => false,
      );
      if (!present)
        await writeFileAtomic(path, Buffer.from(data.buffer, data.byteOffset, data.byteLength), { mode: 0o600 });
      return sha256;
    },

    async readAttachment(sessionId, sha256) {
      entryOf(sessionId);
      if (!/^[0-9a-f]{64}$/.test(sha256)) return undefined;
      return readFile(join(root, sessionId, 'attachments', sha256)).catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') return undefined;
        throw error;
      });
    },

    async idle(sessionId) {
      const entry = entries.get(sessionId);
      if (entry === undefined) return;
      cache.setInUse(sessionId, false);
      await enqueue(entry, async () => {
        await entry.handle?.close();
        entry.handle = undefined;
      });
    },

    async setStatus(sessionId, status) {
      const entry = entries.get(sessionId);
      if (entry === undefined) return;
      entry.status = status;
      cache.setInUse(sessionId, status === 'busy');
    },

    async delete(sessionId) {
      if (damaged.delete(sessionId)) {
        await rm(join(root, sessionId), { recursive: true, force: true });
        return;
      }
      const entry = entryOf(sessionId);
      entries.delete(sessionId);
      cache.delete(sessionId);
      ordered.remove(entry);
      removeChild(entry);
      await enqueue(entry, async () => {
        await entry.handle?.close();
        entry.handle = undefined;
        await rm(join(root, sessionId), { recursive: true, force: true });
      });
    },

    async close() {
      clearInterval(sweep);
      if (flushTimer !== undefined) clearTimeout(flushTimer);
      flushTimer = undefined;
      try {
        await flushMeta();
      } finally {
        await Promise.all(
          [...entries.values()].map((entry) =>
            enqueue(entry, async () => {
              await entry.handle?.close();
              entry.handle = undefined;
            }),
          ),
        );
      }
    },
  };

  // Prompts that were waiting for a turn when the server stopped: kept as messages of their session
  // (they were never answered), in the order they came.
  for (const entry of entries.values()) {
    const path = join(root, entry.meta.sessionId, 'queue.jsonl');
    const text = await readFile(path, 'utf8').catch(() => undefined);
    if (text === undefined) continue;
    for (const line of text.split('\n')) {
      if (line.trim() === '') continue;
      try {
        const prompt = JSON.parse(line) as QueuedPrompt;
        await store.append(entry.meta.sessionId, {
          id: prompt.messageId,
          at: prompt.at,
          role: 'user',
          text: prompt.text,
          ...(typeof prompt.cronJobId === 'string' ? { cronJobId: prompt.cronJobId } : {}),
        });
      } catch (error) {
        logger.warn({ err: error, sessionId: entry.meta.sessionId }, 'skipping an unreadable queued prompt');
      }
    }
    await rm(path, { force: true });
    await store.idle(entry.meta.sessionId);
    logger.info({ sessionId: entry.meta.sessionId }, 'prompts queued before the restart were stored unanswered');
  }
  return store;
}

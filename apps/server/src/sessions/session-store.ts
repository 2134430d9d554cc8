import { randomUUID } from 'node:crypto';
import { type FileHandle, mkdir, open, readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '@molf/logging';
import { MolfError, type SessionInfo, type SessionMessage, SessionMessageSchema, type WorkerId } from '@molf/protocol';
import writeFileAtomic from 'write-file-atomic';
import { z } from 'zod';

const StoredMetaSchema = z.object({
  sessionId: z.string(),
  workerId: z.string(),
  name: z.string(),
  model: z.string().optional(),
  createdAt: z.string(),
  updatedAt: z.string(),
  messageCount: z.number().int(),
});
type StoredMeta = z.infer<typeof StoredMetaSchema>;

export type SessionStore = {
  create(options: { workerId: WorkerId; name?: string | undefined; model?: string | undefined }): Promise<SessionInfo>;
  get(sessionId: string): SessionInfo | undefined;
  /** Newest first; reads no message file. */
  list(filter: { workerId?: string | undefined; name?: string | undefined; limit: number; offset: number }): {
    sessions: SessionInfo[];
    total: number;
  };
  /** Every stored message; a torn last line (a crash mid-write) is skipped. */
  messages(sessionId: string): Promise<SessionMessage[]>;
  /** Appends one message durably (written and synced before this resolves): O(1), no rewrite. */
  append(sessionId: string, message: SessionMessage): Promise<void>;
  update(sessionId: string, change: { name?: string; model?: string }): Promise<SessionInfo>;
  setStatus(sessionId: string, status: SessionInfo['status']): void;
  /** Closes the session's open message file (at the end of a turn), so idle sessions hold no descriptor. */
  release(sessionId: string): Promise<void>;
  delete(sessionId: string): Promise<void>;
  /** Flushes metadata and closes open files. */
  close(): Promise<void>;
};

type Entry = {
  meta: StoredMeta;
  status: SessionInfo['status'];
  /** The open message file, kept while the session is in use. */
  handle: FileHandle | undefined;
  /** Appends and metadata writes of this session, one after another. */
  queue: Promise<unknown>;
  metaDirty: boolean;
};

/** Metadata (name, counts, times) is written at most this often; messages are written at once. */
const META_FLUSH_MS = 1_000;

/**
 * Sessions under `{dataDir}/sessions/{id}/`: `meta.json` (small, rewritten atomically, at most once
 * a second) and `messages.jsonl`, one message per line, appended and synced as each message
 * completes — so a new message costs O(1) and a crash loses at most the message being written.
 * Listing reads only the metadata, all of it loaded once at start.
 */
export async function openSessionStore(options: { dataDir: string; logger: Logger }): Promise<SessionStore> {
  const root = join(options.dataDir, 'sessions');
  await mkdir(root, { recursive: true, mode: 0o700 });
  const entries = new Map<string, Entry>();
  const { logger } = options;

  // Only the small metadata files are read at start, 64 at a time.
  const names = await readdir(root);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(64, names.length) }, async () => {
      while (next < names.length) {
        const name = names[next++] as string;
        try {
          const meta = StoredMetaSchema.parse(JSON.parse(await readFile(join(root, name, 'meta.json'), 'utf8')));
          entries.set(meta.sessionId, {
            meta,
            status: 'idle',
            handle: undefined,
            queue: Promise.resolve(),
            metaDirty: false,
          });
        } catch (error) {
          logger.warn({ err: error, session: name }, 'skipping a session whose metadata cannot be read');
        }
      }
    }),
  );
  /** Sessions newest first, rebuilt only after a change. */
  let ordered: Entry[] | undefined;
  const touched = () => {
    ordered = undefined;
  };

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

  async function writeMeta(entry: Entry): Promise<void> {
    entry.metaDirty = false;
    await writeFileAtomic(join(root, entry.meta.sessionId, 'meta.json'), `${JSON.stringify(entry.meta)}\n`, {
      mode: 0o600,
    });
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
    return { ...entry.meta, workerId: entry.meta.workerId as WorkerId, status: entry.status };
  }

  function entryOf(sessionId: string): Entry {
    const entry = entries.get(sessionId);
    if (entry === undefined)
      throw new MolfError('session_not_found', `no session ${sessionId}`, { field: 'sessionId' });
    return entry;
  }

  return {
    async create({ workerId, name, model }) {
      const sessionId = randomUUID();
      const now = new Date().toISOString();
      const meta: StoredMeta = {
        sessionId,
        workerId,
        name: name ?? `Session ${now.slice(0, 16).replace('T', ' ')}`,
        ...(model === undefined ? {} : { model }),
        createdAt: now,
        updatedAt: now,
        messageCount: 0,
      };
      await mkdir(join(root, sessionId), { recursive: true, mode: 0o700 });
      const entry: Entry = { meta, status: 'idle', handle: undefined, queue: Promise.resolve(), metaDirty: false };
      await writeMeta(entry);
      entries.set(sessionId, entry);
      touched();
      return toInfo(entry);
    },

    get(sessionId) {
      const entry = entries.get(sessionId);
      return entry === undefined ? undefined : toInfo(entry);
    },

    list({ workerId, name, limit, offset }) {
      const needle = name?.toLowerCase();
      // ISO times order as strings; the sorted list is kept until a session changes.
      ordered ??= [...entries.values()].sort((a, b) =>
        a.meta.updatedAt < b.meta.updatedAt ? 1 : a.meta.updatedAt > b.meta.updatedAt ? -1 : 0,
      );
      const matching =
        workerId === undefined && needle === undefined
          ? ordered
          : ordered.filter(
              (entry) =>
                (workerId === undefined || entry.meta.workerId === workerId) &&
                (needle === undefined || entry.meta.name.toLowerCase().includes(needle)),
            );
      return { sessions: matching.slice(offset, offset + limit).map(toInfo), total: matching.length };
    },

    async messages(sessionId) {
      const entry = entryOf(sessionId);
      // Wait for appends already under way, so a reader sees every message it was told about.
      await entry.queue;
      const text = await readFile(join(root, sessionId, 'messages.jsonl'), 'utf8').catch(
        (error: NodeJS.ErrnoException) => {
          if (error.code === 'ENOENT') return '';
          throw error;
        },
      );
      const messages: SessionMessage[] = [];
      const lines = text.split('\n');
      lines.forEach((line, index) => {
        if (line.trim() === '') return;
        try {
          messages.push(SessionMessageSchema.parse(JSON.parse(line)));
        } catch (error) {
          // Only the last line can be torn by a crash; anything else is damage worth a warning too.
          logger.warn({ err: error, sessionId, line: index + 1 }, 'skipping an unreadable session message');
        }
      });
      if (entry.meta.messageCount !== messages.length) {
        entry.meta.messageCount = messages.length;
        entry.metaDirty = true;
        scheduleMetaFlush();
      }
      return messages;
    },

    append(sessionId, message) {
      const entry = entryOf(sessionId);
      const line = `${JSON.stringify(message)}\n`;
      return enqueue(entry, async () => {
        entry.handle ??= await open(join(root, sessionId, 'messages.jsonl'), 'a', 0o600);
        await entry.handle.appendFile(line);
        await entry.handle.datasync();
        entry.meta.messageCount += 1;
        entry.meta.updatedAt = message.at;
        touched();
        entry.metaDirty = true;
        scheduleMetaFlush();
      });
    },

    async update(sessionId, change) {
      const entry = entryOf(sessionId);
      if (change.name !== undefined) entry.meta.name = change.name;
      if (change.model !== undefined) entry.meta.model = change.model;
      entry.meta.updatedAt = new Date().toISOString();
      touched();
      await enqueue(entry, () => writeMeta(entry));
      return toInfo(entry);
    },

    async release(sessionId) {
      const entry = entries.get(sessionId);
      if (entry === undefined) return;
      await enqueue(entry, async () => {
        await entry.handle?.close();
        entry.handle = undefined;
      });
    },

    setStatus(sessionId, status) {
      const entry = entries.get(sessionId);
      if (entry !== undefined) entry.status = status;
    },

    async delete(sessionId) {
      const entry = entryOf(sessionId);
      entries.delete(sessionId);
      touched();
      await enqueue(entry, async () => {
        await entry.handle?.close();
        entry.handle = undefined;
        await rm(join(root, sessionId), { recursive: true, force: true });
      });
    },

    async close() {
      if (flushTimer !== undefined) clearTimeout(flushTimer);
      flushTimer = undefined;
      await flushMeta();
      await Promise.all(
        [...entries.values()].map((entry) =>
          enqueue(entry, async () => {
            await entry.handle?.close();
            entry.handle = undefined;
          }),
        ),
      );
    },
  };
}

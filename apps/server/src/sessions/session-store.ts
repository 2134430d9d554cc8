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

/** A prompt waiting for its turn. */
export type QueuedPrompt = { messageId: string; text: string; model?: string | undefined; at: string };

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
  /**
   * Keeps a prompt that waits for the running turn in `queue.jsonl` (synced), so that a crash loses
   * no prompt the client was told was accepted; `dequeue` removes it once its turn stores it.
   */
  enqueue(sessionId: string, prompt: QueuedPrompt): Promise<void>;
  dequeue(sessionId: string, messageId: string): Promise<void>;
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

  const store: SessionStore = {
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
      // The metadata is written lazily: after a crash it may lag behind the messages.
      const lastAt = messages.at(-1)?.at;
      if (entry.meta.messageCount !== messages.length || (lastAt !== undefined && lastAt > entry.meta.updatedAt)) {
        entry.meta.messageCount = messages.length;
        if (lastAt !== undefined && lastAt > entry.meta.updatedAt) entry.meta.updatedAt = lastAt;
        touched();
        entry.metaDirty = true;
        scheduleMetaFlush();
      }
      return messages;
    },

    enqueue(sessionId, prompt) {
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

    dequeue(sessionId, messageId) {
      const entry = entryOf(sessionId);
      return enqueue(entry, async () => {
        const path = join(root, sessionId, 'queue.jsonl');
        const lines = (await readFile(path, 'utf8').catch(() => '')).split('\n').filter((line) => line.trim() !== '');
        const rest = lines.filter((line) => !line.includes(`"messageId":${JSON.stringify(messageId)}`));
        if (rest.length === 0) await rm(path, { force: true });
        else await writeFileAtomic(path, `${rest.join('\n')}\n`, { mode: 0o600 });
      });
    },

    append(sessionId, message) {
      const entry = entryOf(sessionId);
      const line = `${JSON.stringify(message)}\n`;
      return enqueue(entry, async () => {
        if (entry.handle === undefined) {
          const path = join(root, sessionId, 'messages.jsonl');
          entry.handle = await open(path, 'a', 0o600);
          // A crash may have left half a line: end it, so that this message starts a line of its own
          // (the torn one is then skipped on reading) instead of being glued to the garbage.
          const { size } = await entry.handle.stat();
          if (size > 0) {
            const last = Buffer.alloc(1);
            const reader = await open(path, 'r');
            try {
              await reader.read(last, 0, 1, size - 1);
            } finally {
              await reader.close();
            }
            if (last[0] !== 0x0a) await entry.handle.appendFile('\n');
          }
        }
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
        });
      } catch (error) {
        logger.warn({ err: error, sessionId: entry.meta.sessionId }, 'skipping an unreadable queued prompt');
      }
    }
    await rm(path, { force: true });
    logger.info({ sessionId: entry.meta.sessionId }, 'prompts queued before the restart were stored unanswered');
  }
  return store;
}

import { randomUUID } from 'node:crypto';
import type { SessionMessage, SessionParent, WorkerId } from '@molf/protocol';
import { describe, expect, it } from 'vitest';
import type { SessionStore } from '../sessions/index.ts';
import { assistantMessage } from './session-test-data.ts';

/** A session as an earlier run of the server left it: metadata only, no history. */
export type SeededSession = {
  sessionId: string;
  workerId: string;
  name: string;
  parent?: SessionParent;
  createdAt: string;
  updatedAt: string;
};

/** A place where one backend keeps sessions: a data dir, or a database. */
export type SessionStorePlace = AsyncDisposable & {
  /** A store over the place; called again, it is a restarted server (or another instance). */
  open(): Promise<SessionStore>;
  /** Writes sessions the way the backend keeps them, quickly and without histories. */
  seed(sessions: readonly SeededSession[]): Promise<void>;
};

export type SessionStoreBackend = {
  name: string;
  /** Why this backend cannot run here; undefined when it can. */
  unavailable?: () => string | undefined;
  /** A new, empty place. */
  prepare(): Promise<SessionStorePlace>;
};

const worker = 'w1' as WorkerId;

const user = (text: string): SessionMessage => ({ id: text, at: new Date().toISOString(), role: 'user', text });

const ids = (messages: readonly SessionMessage[]) => messages.map((message) => message.id);
const tick = () => new Promise((resolveTick) => setTimeout(resolveTick, 3));

/**
 * What every session store does, whatever keeps the sessions: the same behaviour sentences run
 * against the file store and the PostgreSQL one.
 */
export function describeSessionStoreContract(backend: SessionStoreBackend): void {
  const reason = backend.unavailable?.();
  const suite = reason === undefined ? describe : describe.skip;
  suite(`session store contract: ${backend.name}${reason === undefined ? '' : ` (skipped: ${reason})`}`, () => {
    it('stores messages exactly and in order, and reads them back after a restart', async () => {
      await using place = await backend.prepare();
      const store = await place.open();
      const session = await store.create({ workerId: worker, name: 'first' });
      const odd: SessionMessage = {
        id: 'odd',
        at: new Date().toISOString(),
        role: 'user',
        text: 'nul \u0000, newline \n, quote ", emoji 🦊, backslash \\, "{not json',
      };
      await store.append(session.sessionId, user('one'));
      await store.append(session.sessionId, odd);
      await store.append(session.sessionId, assistantMessage({ usage: { inputTokens: 1, outputTokens: 2 } }));
      const before = await store.messages(session.sessionId);
      await store.close();

      const reopened = await place.open();
      expect(await reopened.get(session.sessionId)).toMatchObject({
        sessionId: session.sessionId,
        workerId: worker,
        name: 'first',
        messageCount: 3,
        status: 'idle',
      });
      const after = await reopened.messages(session.sessionId);
      expect(after).toEqual(before);
      expect(after[1]).toEqual(odd);
      // A copy: changing it changes nothing stored.
      after.push(user('not stored'));
      expect(await reopened.messages(session.sessionId)).toHaveLength(3);
      await reopened.close();
    });

    it('keeps every message whose append resolved when the server dies without closing', async () => {
      await using place = await backend.prepare();
      const store = await place.open();
      const session = await store.create({ workerId: worker });
      await store.append(session.sessionId, user('prompt'));
      await store.append(session.sessionId, user('tool result'));
      // No close: as after kill -9.
      const reopened = await place.open();
      expect(ids(await reopened.messages(session.sessionId))).toEqual(['prompt', 'tool result']);
      expect((await reopened.get(session.sessionId))?.messageCount).toBe(2);
      await reopened.close();
      await store.close();
    });

    it('takes many appends to one session at once, losing none and counting each once', async () => {
      await using place = await backend.prepare();
      const store = await place.open();
      const session = await store.create({ workerId: worker });
      const sent = Array.from({ length: 40 }, (_, index) => `m${index}`);
      await Promise.all(sent.map((id) => store.append(session.sessionId, user(id))));
      const stored = ids(await store.messages(session.sessionId));
      expect(new Set(stored)).toEqual(new Set(sent));
      expect(stored).toHaveLength(40);
      expect((await store.get(session.sessionId))?.messageCount).toBe(40);
      await store.close();
    });

    it('lists newest first with a worker filter, a name filter and pages, and forgets deleted sessions', async () => {
      await using place = await backend.prepare();
      const store = await place.open();
      const created = [];
      for (const [index, workerId] of ['a', 'b', 'a', 'a'].entries()) {
        created.push(await store.create({ workerId: workerId as WorkerId, name: `task ${index}` }));
        await tick();
      }
      await store.append(created[0]?.sessionId ?? '', user('bump'));
      expect((await store.list({ limit: 10, offset: 0 })).sessions.map((session) => session.name)).toEqual([
        'task 0',
        'task 3',
        'task 2',
        'task 1',
      ]);
      expect(await store.list({ workerId: 'a', limit: 2, offset: 1 })).toMatchObject({
        total: 3,
        sessions: [{ name: 'task 3' }, { name: 'task 2' }],
      });
      expect((await store.list({ name: 'TASK 1', limit: 10, offset: 0 })).sessions).toHaveLength(1);
      // The name filter is a plain substring: no pattern characters.
      expect((await store.list({ name: 'task_', limit: 10, offset: 0 })).total).toBe(0);
      expect((await store.list({ name: '%', limit: 10, offset: 0 })).total).toBe(0);
      await store.delete(created[1]?.sessionId ?? '');
      expect((await store.list({ limit: 10, offset: 0 })).total).toBe(3);
      await expect(store.messages(created[1]?.sessionId ?? '')).rejects.toMatchObject({ code: 'session_not_found' });
      await store.close();
    });

    it('lists 10,000 sessions page by page, filtered, in recency order, without reading any history', async () => {
      await using place = await backend.prepare();
      const count = 10_000;
      const base = Date.UTC(2025, 0, 1);
      const sessionIds = Array.from({ length: count }, () => randomUUID());
      const seeded: SeededSession[] = sessionIds.map((sessionId, index) => ({
        sessionId,
        workerId: index % 2 === 0 ? 'even' : 'odd',
        name: `session ${index}${index % 7 === 0 ? ' Deploy' : ''}`,
        // Every third one is a subagent's session of the next one.
        ...(index % 3 === 0
          ? { parent: { sessionId: sessionIds[index + 1] ?? '', toolCallId: 't', agent: 'explore' } }
          : {}),
        createdAt: new Date(base).toISOString(),
        // Shuffled times, some equal: the store must order them itself.
        updatedAt: new Date(base + ((index * 7_919) % 5_000) * 1_000).toISOString(),
      }));
      // Seeded without histories: a listing that read one would fail.
      await place.seed(seeded);
      const store = await place.open();
      const latest = new Map(seeded.map((session) => [session.sessionId, session.updatedAt]));
      // The oldest top-level session becomes the newest of all.
      const bumped = seeded
        .filter((session) => session.parent === undefined)
        .sort((a, b) => (a.updatedAt < b.updatedAt ? -1 : 1))[0] as SeededSession;
      await store.update(bumped.sessionId, { name: `${bumped.name} renamed` });
      latest.set(bumped.sessionId, (await store.get(bumped.sessionId))?.updatedAt ?? '');

      type Filter = { workerId?: string; name?: string; topLevel?: boolean };
      const expected = (filter: Filter) =>
        seeded
          .filter(
            (session) =>
              (filter.workerId === undefined || session.workerId === filter.workerId) &&
              (filter.topLevel !== true || session.parent === undefined) &&
              (filter.name === undefined || session.name.toLowerCase().includes(filter.name.toLowerCase())),
          )
          .map((session) => session.sessionId)
          .sort((a, b) => ((latest.get(a) ?? '') < (latest.get(b) ?? '') ? 1 : -1));
      const times = (list: string[]) => list.map((sessionId) => latest.get(sessionId));
      for (const filter of [{}, { topLevel: true, name: 'deploy' }, { topLevel: true, workerId: 'odd' }] as Filter[]) {
        const pages: string[] = [];
        let total = -1;
        for (let offset = 0; total === -1 || offset < total; offset += 500) {
          const page = await store.list({ ...filter, limit: 500, offset });
          total = page.total;
          pages.push(...page.sessions.map((session) => session.sessionId));
        }
        const want = expected(filter);
        expect(total).toBe(want.length);
        // Sessions of the same time may come in either order; the times and the set must match.
        expect(times(pages)).toEqual(times(want));
        expect(new Set(pages)).toEqual(new Set(want));
      }
      const top = await store.list({ topLevel: true, limit: 1, offset: 0 });
      expect(top.sessions[0]).toMatchObject({ sessionId: bumped.sessionId, name: `${bumped.name} renamed` });
      expect(top.total).toBe(count - Math.ceil(count / 3));
      const children = await store.list({ parentSessionId: sessionIds[1] ?? '', limit: 10, offset: 0 });
      expect(children.sessions.map((session) => session.sessionId)).toEqual([sessionIds[0]]);
      await store.close();
    });

    it('lets a first prompt title only an untitled session, and a person rename any', async () => {
      await using place = await backend.prepare();
      const store = await place.open();
      const untitled = await store.create({ workerId: worker });
      expect(untitled).toMatchObject({
        untitled: true,
        name: expect.stringMatching(/^Session \d{4}-\d\d-\d\d \d\d:\d\d$/),
      });
      expect(await store.update(untitled.sessionId, { title: 'Fix the build' })).toMatchObject({
        name: 'Fix the build',
      });
      expect((await store.get(untitled.sessionId))?.untitled).toBeUndefined();
      // Titled once: a later title does not take.
      expect(await store.update(untitled.sessionId, { title: 'Another' })).toMatchObject({ name: 'Fix the build' });
      const named = await store.create({ workerId: worker, name: 'mine', model: 'fake/a' });
      expect(await store.update(named.sessionId, { title: 'auto' })).toMatchObject({ name: 'mine' });
      expect(await store.update(named.sessionId, { name: 'renamed', model: 'fake/b' })).toMatchObject({
        name: 'renamed',
        model: 'fake/b',
      });
      await store.close();
      const reopened = await place.open();
      expect(await reopened.get(named.sessionId)).toMatchObject({ name: 'renamed', model: 'fake/b' });
      await reopened.close();
    });

    it('keeps an attachment once per content and reads it back by its SHA-256', async () => {
      await using place = await backend.prepare();
      const store = await place.open();
      const session = await store.create({ workerId: worker });
      const bytes = new Uint8Array([0, 1, 2, 255, 254]);
      const sha = await store.putAttachment(session.sessionId, bytes);
      expect(sha).toMatch(/^[0-9a-f]{64}$/);
      expect(await store.putAttachment(session.sessionId, bytes)).toBe(sha);
      expect(Array.from((await store.readAttachment(session.sessionId, sha)) ?? [])).toEqual([0, 1, 2, 255, 254]);
      expect(await store.readAttachment(session.sessionId, 'f'.repeat(64))).toBeUndefined();
      expect(await store.readAttachment(session.sessionId, '../../etc/passwd')).toBeUndefined();
      const other = await store.create({ workerId: worker });
      expect(await store.readAttachment(other.sessionId, sha)).toBeUndefined();
      await store.delete(session.sessionId);
      await expect(store.readAttachment(session.sessionId, sha)).rejects.toMatchObject({ code: 'session_not_found' });
      await store.close();
    });

    it('answers session_not_found for an unknown session, and get answers undefined', async () => {
      await using place = await backend.prepare();
      const store = await place.open();
      const unknown = randomUUID();
      expect(await store.get(unknown)).toBeUndefined();
      for (const call of [
        () => store.messages(unknown),
        () => store.append(unknown, user('lost')),
        () => store.update(unknown, { name: 'x' }),
        () => store.enqueue(unknown, { messageId: 'q', text: 'q', at: new Date().toISOString() }),
        () => store.putAttachment(unknown, new Uint8Array([1])),
        () => store.delete(unknown),
      ]) {
        await expect(call()).rejects.toMatchObject({ code: 'session_not_found' });
      }
      await store.close();
    });

    it('keeps queued prompts in order until their turn stores them: the stored prompt leaves the queue', async () => {
      await using place = await backend.prepare();
      const store = await place.open();
      const session = await store.create({ workerId: worker });
      const at = new Date().toISOString();
      for (const messageId of ['q1', 'q2', 'q3'])
        await store.enqueue(session.sessionId, { messageId, text: messageId, at });
      expect((await store.queued(session.sessionId)).map((prompt) => prompt.messageId)).toEqual(['q1', 'q2', 'q3']);

      // Storing a prompt as a message takes it out of the queue at once: no separate dequeue that a
      // crash in between could miss (the prompt would run again).
      await store.append(session.sessionId, user('q2'));
      expect((await store.queued(session.sessionId)).map((prompt) => prompt.messageId)).toEqual(['q1', 'q3']);
      // Other messages leave the queue as it is.
      await store.append(session.sessionId, user('not-queued'));
      await store.append(session.sessionId, assistantMessage());
      await store.dequeue(session.sessionId, 'q1');
      expect((await store.queued(session.sessionId)).map((prompt) => prompt.messageId)).toEqual(['q3']);
      await store.close();
    });

    it('counts usage as messages are stored, and gives a session its subagents’ usage on top of its own', async () => {
      await using place = await backend.prepare();
      const store = await place.open();
      const parent = await store.create({ workerId: worker });
      const child = await store.create({
        workerId: worker,
        parent: { sessionId: parent.sessionId, toolCallId: 'call_task', agent: 'explore' },
      });
      await store.append(parent.sessionId, user('hi'));
      await store.append(
        parent.sessionId,
        assistantMessage({ usage: { inputTokens: 100, outputTokens: 10, costUsd: 0.001 } }),
      );
      await store.append(parent.sessionId, assistantMessage());
      await store.append(parent.sessionId, {
        id: 's',
        at: new Date().toISOString(),
        role: 'summary',
        text: 'summary',
        coversUntil: 'hi',
        model: 'fake/m',
        usage: { inputTokens: 50, outputTokens: 5, cacheReadTokens: 20 },
      });
      await store.append(
        child.sessionId,
        assistantMessage({ usage: { inputTokens: 200, outputTokens: 20, costUsd: 0.2 } }),
      );
      const own = { inputTokens: 150, outputTokens: 15, cacheReadTokens: 20, costUsd: 0.001, unpricedCalls: 1 };
      const whole = { inputTokens: 350, outputTokens: 35, cacheReadTokens: 20, costUsd: 0.201, unpricedCalls: 1 };
      expect((await store.get(parent.sessionId))?.usage).toEqual(whole);
      expect((await store.get(child.sessionId))?.usage).toEqual({ inputTokens: 200, outputTokens: 20, costUsd: 0.2 });
      await store.close();

      const reopened = await place.open();
      expect((await reopened.list({ topLevel: true, limit: 10, offset: 0 })).sessions[0]?.usage).toEqual(whole);
      await reopened.delete(child.sessionId);
      expect((await reopened.get(parent.sessionId))?.usage).toEqual(own);
      expect((await reopened.list({ parentSessionId: parent.sessionId, limit: 10, offset: 0 })).sessions).toEqual([]);
      await reopened.close();
    });

    it('shows a busy session as busy in listings until it is idle again', async () => {
      await using place = await backend.prepare();
      const store = await place.open();
      const session = await store.create({ workerId: worker });
      await store.setStatus(session.sessionId, 'busy');
      expect((await store.list({ limit: 10, offset: 0 })).sessions[0]?.status).toBe('busy');
      await store.setStatus(session.sessionId, 'idle');
      await store.idle(session.sessionId);
      expect((await store.get(session.sessionId))?.status).toBe('idle');
      await store.close();
    });
  });
}

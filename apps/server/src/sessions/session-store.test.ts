import { appendFile, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createSilentLogger } from '@molf/logging';
import type { SessionMessage, WorkerId } from '@molf/protocol';
import { describe, expect, it } from 'vitest';
import { createTempDir } from '../testing/test-link.ts';
import { openSessionStore } from './session-store.ts';

const logger = createSilentLogger();
const user = (text: string): SessionMessage => ({ id: text, at: new Date().toISOString(), role: 'user', text });

describe('session store', () => {
  it('appends messages one per line and reads them back after a reopen', async () => {
    await using dir = await createTempDir();
    const store = await openSessionStore({ dataDir: dir.path, logger });
    const session = await store.create({ workerId: 'w1' as WorkerId, name: 'first' });
    await store.append(session.sessionId, user('one'));
    await store.append(session.sessionId, user('two'));
    const file = await readFile(join(dir.path, 'sessions', session.sessionId, 'messages.jsonl'), 'utf8');
    expect(file.trim().split('\n')).toHaveLength(2);
    await store.close();

    const reopened = await openSessionStore({ dataDir: dir.path, logger });
    expect(reopened.get(session.sessionId)).toMatchObject({ name: 'first', messageCount: 2, status: 'idle' });
    expect((await reopened.messages(session.sessionId)).map((message) => message.id)).toEqual(['one', 'two']);
    await reopened.close();
  });

  it('skips a torn last line left by a crash and keeps every complete message', async () => {
    await using dir = await createTempDir();
    const store = await openSessionStore({ dataDir: dir.path, logger });
    const session = await store.create({ workerId: 'w1' as WorkerId });
    await store.append(session.sessionId, user('kept'));
    await store.close();
    await appendFile(join(dir.path, 'sessions', session.sessionId, 'messages.jsonl'), '{"id":"torn","role":"us');
    const reopened = await openSessionStore({ dataDir: dir.path, logger });
    expect((await reopened.messages(session.sessionId)).map((message) => message.id)).toEqual(['kept']);
    // The next message starts a line of its own instead of being glued to the torn one.
    await reopened.append(session.sessionId, user('after the crash'));
    expect((await reopened.messages(session.sessionId)).map((message) => message.id)).toEqual([
      'kept',
      'after the crash',
    ]);
    await reopened.close();
  });

  it('stores prompts that were still queued when the server stopped as unanswered messages, in order', async () => {
    await using dir = await createTempDir();
    const store = await openSessionStore({ dataDir: dir.path, logger });
    const session = await store.create({ workerId: 'w1' as WorkerId });
    await store.append(session.sessionId, user('running'));
    const at = new Date().toISOString();
    await store.enqueue(session.sessionId, { messageId: 'q1', text: 'first queued', at });
    await store.enqueue(session.sessionId, { messageId: 'q2', text: 'second queued', at });
    await store.enqueue(session.sessionId, { messageId: 'q3', text: 'taken', at });
    await store.dequeue(session.sessionId, 'q3');
    // No close: as after kill -9.
    const reopened = await openSessionStore({ dataDir: dir.path, logger });
    expect((await reopened.messages(session.sessionId)).map((message) => message.id)).toEqual(['running', 'q1', 'q2']);
    await reopened.close();
    await store.close();
  });

  it('lists newest first with a worker filter, a name filter and pages, and forgets deleted sessions', async () => {
    await using dir = await createTempDir();
    const store = await openSessionStore({ dataDir: dir.path, logger });
    const created = [];
    for (const [index, worker] of ['a', 'b', 'a', 'a'].entries()) {
      created.push(await store.create({ workerId: worker as WorkerId, name: `task ${index}` }));
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    await store.append(created[0]?.sessionId ?? '', user('bump'));
    expect(store.list({ limit: 10, offset: 0 }).sessions.map((session) => session.name)).toEqual([
      'task 0',
      'task 3',
      'task 2',
      'task 1',
    ]);
    expect(store.list({ workerId: 'a', limit: 2, offset: 1 })).toMatchObject({
      total: 3,
      sessions: [{ name: 'task 3' }, { name: 'task 2' }],
    });
    expect(store.list({ name: 'TASK 1', limit: 10, offset: 0 }).sessions).toHaveLength(1);
    await store.delete(created[1]?.sessionId ?? '');
    expect(store.list({ limit: 10, offset: 0 }).total).toBe(3);
    await expect(store.messages(created[1]?.sessionId ?? '')).rejects.toMatchObject({ code: 'session_not_found' });
    await store.close();
  });
});

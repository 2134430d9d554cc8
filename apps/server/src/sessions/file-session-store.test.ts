import { appendFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createSilentLogger } from '@molf/logging';
import type { SessionMessage, WorkerId } from '@molf/protocol';
import { describe, expect, it } from 'vitest';
import { createTempDir } from '../testing/test-link.ts';
import { openFileSessionStore } from './file-session-store.ts';

const logger = createSilentLogger();
const user = (text: string): SessionMessage => ({ id: text, at: new Date().toISOString(), role: 'user', text });

describe('session store', () => {
  it('appends messages one per line and reads them back after a reopen', async () => {
    await using dir = await createTempDir();
    const store = await openFileSessionStore({ dataDir: dir.path, logger });
    const session = await store.create({ workerId: 'w1' as WorkerId, name: 'first' });
    await store.append(session.sessionId, user('one'));
    await store.append(session.sessionId, user('two'));
    const file = await readFile(join(dir.path, 'sessions', session.sessionId, 'messages.jsonl'), 'utf8');
    const [header, ...lines] = file.trim().split('\n');
    expect(JSON.parse(header ?? '')).toMatchObject({ kind: 'session', sessionId: session.sessionId, workerId: 'w1' });
    expect(lines).toHaveLength(2);
    await store.close();

    const reopened = await openFileSessionStore({ dataDir: dir.path, logger });
    expect(await reopened.get(session.sessionId)).toMatchObject({ name: 'first', messageCount: 2, status: 'idle' });
    expect((await reopened.messages(session.sessionId)).map((message) => message.id)).toEqual(['one', 'two']);
    await reopened.close();
  });

  it('skips a torn last line left by a crash and keeps every complete message', async () => {
    await using dir = await createTempDir();
    const store = await openFileSessionStore({ dataDir: dir.path, logger });
    const session = await store.create({ workerId: 'w1' as WorkerId });
    await store.append(session.sessionId, user('kept'));
    await store.close();
    await appendFile(join(dir.path, 'sessions', session.sessionId, 'messages.jsonl'), '{"id":"torn","role":"us');
    const reopened = await openFileSessionStore({ dataDir: dir.path, logger });
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
    const store = await openFileSessionStore({ dataDir: dir.path, logger });
    const session = await store.create({ workerId: 'w1' as WorkerId });
    await store.append(session.sessionId, user('running'));
    const at = new Date().toISOString();
    await store.enqueue(session.sessionId, { messageId: 'q1', text: 'first queued', at });
    await store.enqueue(session.sessionId, { messageId: 'q2', text: 'second queued', at });
    await store.enqueue(session.sessionId, { messageId: 'q3', text: 'taken', at });
    await store.dequeue(session.sessionId, 'q3');
    // No close: as after kill -9.
    const reopened = await openFileSessionStore({ dataDir: dir.path, logger });
    expect((await reopened.messages(session.sessionId)).map((message) => message.id)).toEqual(['running', 'q1', 'q2']);
    await reopened.close();
    await store.close();
  });
});

describe('session store: the history is the truth', () => {
  it('rebuilds a session whose meta.json is corrupt from its history, and logs it', async () => {
    await using dir = await createTempDir();
    const store = await openFileSessionStore({ dataDir: dir.path, logger });
    const session = await store.create({ workerId: 'w1' as WorkerId, name: 'keeps its name', model: 'fake/m' });
    await store.append(session.sessionId, user('one'));
    await store.append(session.sessionId, user('two'));
    await store.close();
    await writeFile(join(dir.path, 'sessions', session.sessionId, 'meta.json'), '{"sessionId": "trunc');

    const warnings: string[] = [];
    const reopened = await openFileSessionStore({ dataDir: dir.path, logger: recordingLogger(warnings) });
    expect(await reopened.get(session.sessionId)).toMatchObject({
      sessionId: session.sessionId,
      workerId: 'w1',
      name: 'keeps its name',
      model: 'fake/m',
      messageCount: 2,
    });
    expect((await reopened.messages(session.sessionId)).map((message) => message.id)).toEqual(['one', 'two']);
    expect(warnings.some((line) => line.includes('rebuilt from its history'))).toBe(true);
    await reopened.close();
    // The rebuilt metadata was written back.
    const meta = JSON.parse(await readFile(join(dir.path, 'sessions', session.sessionId, 'meta.json'), 'utf8'));
    expect(meta).toMatchObject({ sessionId: session.sessionId, messageCount: 2 });
  });

  it('lists a session it cannot rebuild as damaged with the reason, refuses to use it, and deletes it', async () => {
    await using dir = await createTempDir();
    const sessionId = '5b2c6f3e-8d7a-4f7e-9a51-0c1d2e3f4a5b';
    const path = join(dir.path, 'sessions', sessionId);
    await mkdir(path, { recursive: true });
    await writeFile(join(path, 'meta.json'), 'not json');
    // A history from before histories had a header: nothing says which worker it belongs to.
    await writeFile(join(path, 'messages.jsonl'), `${JSON.stringify(user('old'))}\n`);
    const store = await openFileSessionStore({ dataDir: dir.path, logger });
    const listed = await store.list({ limit: 10, offset: 0 });
    expect(listed.sessions).toEqual([]);
    expect(listed.damaged).toEqual([
      { sessionId, reason: expect.stringMatching(/meta\.json cannot be read.*does not say which worker/) },
    ]);
    await expect(store.get(sessionId)).rejects.toMatchObject({ code: 'session_damaged' });
    await expect(store.messages(sessionId)).rejects.toMatchObject({ code: 'session_damaged' });
    await store.delete(sessionId);
    expect((await store.list({ limit: 10, offset: 0 })).damaged).toEqual([]);
    await expect(readFile(join(path, 'messages.jsonl'))).rejects.toMatchObject({ code: 'ENOENT' });
    await store.close();
  });
});

describe('session store: live histories in memory', () => {
  it('reads a live session’s history from its file once, then keeps it with every new message', async () => {
    await using dir = await createTempDir();
    const store = await openFileSessionStore({ dataDir: dir.path, logger });
    const session = await store.create({ workerId: 'w1' as WorkerId });
    await store.close();
    const reopened = await openFileSessionStore({ dataDir: dir.path, logger });
    await reopened.append(session.sessionId, user('one'));
    expect((await reopened.messages(session.sessionId)).map((message) => message.id)).toEqual(['one']);
    // Damage the file behind the store's back: what it keeps is what it stored.
    await appendFile(join(dir.path, 'sessions', session.sessionId, 'messages.jsonl'), `${JSON.stringify(user('x'))}\n`);
    await reopened.append(session.sessionId, user('two'));
    const history = await reopened.messages(session.sessionId);
    expect(history.map((message) => message.id)).toEqual(['one', 'two']);
    // A copy: a caller changing it changes nothing kept.
    history.push(user('not stored'));
    expect(await reopened.messages(session.sessionId)).toHaveLength(2);
    await reopened.close();
  });

  it('keeps a message appended while the history was being read from its file', async () => {
    await using dir = await createTempDir();
    const store = await openFileSessionStore({ dataDir: dir.path, logger });
    const session = await store.create({ workerId: 'w1' as WorkerId });
    // A history long enough that reading and parsing it takes a while.
    const line = `${JSON.stringify(user('m'))}\n`;
    await appendFile(join(dir.path, 'sessions', session.sessionId, 'messages.jsonl'), line.repeat(50_000));
    await store.close();
    const reopened = await openFileSessionStore({ dataDir: dir.path, logger });
    // The append waits for the read: otherwise it could land in the file after the read and be
    // missing from the history the store keeps.
    const order: string[] = [];
    const reading = reopened.messages(session.sessionId).then(() => order.push('read'));
    const appending = reopened.append(session.sessionId, user('late')).then(() => order.push('append'));
    await Promise.all([reading, appending]);
    expect(order).toEqual(['read', 'append']);
    expect((await reopened.messages(session.sessionId)).at(-1)?.id).toBe('late');
    await reopened.close();
  });

  it('reads the history again once an idle session was evicted', async () => {
    await using dir = await createTempDir();
    const store = await openFileSessionStore({ dataDir: dir.path, logger, historyCache: { maxSize: 0 } });
    const session = await store.create({ workerId: 'w1' as WorkerId });
    await store.append(session.sessionId, user('one'));
    await store.idle(session.sessionId);
    await appendFile(join(dir.path, 'sessions', session.sessionId, 'messages.jsonl'), `${JSON.stringify(user('x'))}\n`);
    expect((await store.messages(session.sessionId)).map((message) => message.id)).toEqual(['one', 'x']);
    await store.close();
  });
});

function recordingLogger(lines: string[]) {
  const record = (_fields: unknown, message?: string) => {
    lines.push(String(message ?? _fields));
  };
  return { ...logger, warn: record, error: record, info: () => {} } as typeof logger;
}

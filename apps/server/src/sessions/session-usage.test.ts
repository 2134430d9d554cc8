import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createSilentLogger } from '@molf/logging';
import type { CallUsage, SessionMessage, WorkerId } from '@molf/protocol';
import { describe, expect, it } from 'vitest';
import { createTempDir } from '../testing/test-link.ts';
import { openFileSessionStore } from './file-session-store.ts';

const logger = createSilentLogger();
const worker = 'w1' as WorkerId;
let counter = 0;

function answer(usage: CallUsage | undefined): SessionMessage {
  counter += 1;
  return {
    id: `a${counter}`,
    at: new Date().toISOString(),
    role: 'assistant',
    text: 'answer',
    toolCalls: [],
    model: 'fake/m',
    ...(usage === undefined ? {} : { usage }),
  };
}

const user: SessionMessage = { id: 'u', at: new Date().toISOString(), role: 'user', text: 'hi' };

describe('session usage in the file store', () => {
  it('counts each stored call as it is appended and keeps the sum across a reopen', async () => {
    await using dir = await createTempDir();
    const store = await openFileSessionStore({ dataDir: dir.path, logger });
    const session = await store.create({ workerId: worker });
    await store.append(session.sessionId, user);
    await store.append(session.sessionId, answer({ inputTokens: 100, outputTokens: 10, costUsd: 0.001 }));
    await store.append(session.sessionId, answer(undefined));
    await store.append(session.sessionId, {
      id: 's',
      at: new Date().toISOString(),
      role: 'summary',
      text: 'summary',
      coversUntil: 'u',
      model: 'fake/m',
      usage: { inputTokens: 50, outputTokens: 5 },
    });
    const totals = { inputTokens: 150, outputTokens: 15, costUsd: 0.001, unpricedCalls: 1 };
    expect((await store.get(session.sessionId))?.usage).toEqual(totals);
    await store.close();

    const reopened = await openFileSessionStore({ dataDir: dir.path, logger });
    expect((await reopened.get(session.sessionId))?.usage).toEqual(totals);
    await reopened.close();
  });

  it('counts a session stored before usage was kept from its history once it is read, and rebuilds it with lost metadata', async () => {
    await using dir = await createTempDir();
    const store = await openFileSessionStore({ dataDir: dir.path, logger });
    const session = await store.create({ workerId: worker });
    await store.append(session.sessionId, answer({ inputTokens: 7, outputTokens: 3 }));
    await store.close();
    const metaPath = join(dir.path, 'sessions', session.sessionId, 'meta.json');
    const { usage: _dropped, ...older } = JSON.parse(await readFile(metaPath, 'utf8')) as Record<string, unknown>;
    await writeFile(metaPath, JSON.stringify(older));

    const reopened = await openFileSessionStore({ dataDir: dir.path, logger });
    // Not known until the history is read: no guess, and no history read at start.
    expect((await reopened.get(session.sessionId))?.usage).toBeUndefined();
    await reopened.messages(session.sessionId);
    expect((await reopened.get(session.sessionId))?.usage).toEqual({
      inputTokens: 7,
      outputTokens: 3,
      unpricedCalls: 1,
    });
    await reopened.append(session.sessionId, answer({ inputTokens: 1, outputTokens: 1, costUsd: 0.5 }));
    await reopened.close();

    await rm(metaPath);
    const rebuilt = await openFileSessionStore({ dataDir: dir.path, logger });
    expect((await rebuilt.get(session.sessionId))?.usage).toEqual({
      inputTokens: 8,
      outputTokens: 4,
      costUsd: 0.5,
      unpricedCalls: 1,
    });
    await rebuilt.close();
  });

  it('gives a session its subagents’ usage on top of its own, and each subagent only its own', async () => {
    await using dir = await createTempDir();
    const store = await openFileSessionStore({ dataDir: dir.path, logger });
    const parent = await store.create({ workerId: worker });
    const child = await store.create({
      workerId: worker,
      parent: { sessionId: parent.sessionId, toolCallId: 'call_task', agent: 'explore' },
    });
    await store.append(parent.sessionId, answer({ inputTokens: 10, outputTokens: 1, costUsd: 0.01 }));
    await store.append(child.sessionId, answer({ inputTokens: 200, outputTokens: 20, costUsd: 0.2 }));
    const whole = { inputTokens: 210, outputTokens: 21, costUsd: 0.21 };
    expect((await store.get(parent.sessionId))?.usage).toEqual(whole);
    expect((await store.get(child.sessionId))?.usage).toEqual({ inputTokens: 200, outputTokens: 20, costUsd: 0.2 });
    await store.close();

    const reopened = await openFileSessionStore({ dataDir: dir.path, logger });
    expect((await reopened.list({ topLevel: true, limit: 10, offset: 0 })).sessions[0]?.usage).toEqual(whole);
    await reopened.delete(child.sessionId);
    expect((await reopened.get(parent.sessionId))?.usage).toEqual({ inputTokens: 10, outputTokens: 1, costUsd: 0.01 });
    await reopened.close();
  });
});

import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createSilentLogger } from '@molf/logging';
import type { SessionMessage, WorkerId } from '@molf/protocol';
import { describe, expect, it } from 'vitest';
import { assistantMessage } from '../testing/session-test-data.ts';
import { createTempDir } from '../testing/test-link.ts';
import { openFileSessionStore } from './file-session-store.ts';

const logger = createSilentLogger();
const worker = 'w1' as WorkerId;

const _user: SessionMessage = { id: 'u', at: new Date().toISOString(), role: 'user', text: 'hi' };

describe('session usage in the file store (the contract suite counts usage on every backend)', () => {
  it('counts a session stored before usage was kept from its history once it is read, and rebuilds it with lost metadata', async () => {
    await using dir = await createTempDir();
    const store = await openFileSessionStore({ dataDir: dir.path, logger });
    const session = await store.create({ workerId: worker });
    await store.append(session.sessionId, assistantMessage({ usage: { inputTokens: 7, outputTokens: 3 } }));
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
    await reopened.append(
      session.sessionId,
      assistantMessage({ usage: { inputTokens: 1, outputTokens: 1, costUsd: 0.5 } }),
    );
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
});

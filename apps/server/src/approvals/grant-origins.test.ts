import { appendFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createSilentLogger } from '@molf/logging';
import { describe, expect, it } from 'vitest';
import { createTempDir } from '../testing/test-link.ts';
import { createGrantOrigins, MAX_GRANT_ORIGINS } from './grant-origins.ts';

const logger = createSilentLogger();

function record(grantId: string, extra: Record<string, unknown> = {}) {
  return {
    time: '2026-11-24T10:00:00.000Z',
    workerId: 'w1',
    decision: 'rules_changed',
    by: 'client:alice',
    subjects: ['npm test'],
    grants: [{ grantId, pattern: 'npm test' }],
    ...extra,
  };
}

describe('createGrantOrigins', () => {
  it('finds grants written before the log was opened and those noted since, and nothing else', async () => {
    await using dir = await createTempDir();
    const path = join(dir.path, 'approvals.jsonl');
    const lines = [
      record('g_before', { client: 'molf-cli/0.1.0', sessionId: 's1' }),
      { time: 'x', decision: 'allow', by: 'rule: …', subjects: [] },
    ];
    await writeFile(path, `${lines.map((line) => JSON.stringify(line)).join('\n')}\n{"grants":[{"grantId":"g_torn"`);
    const origins = createGrantOrigins({ path, sizeAtOpen: (await stat(path)).size, logger });
    // Written after the open: only what `note` was told counts, not what the file holds beyond that size.
    await appendFile(path, `\n${JSON.stringify(record('g_unnoted'))}\n`);
    origins.note(record('g_after'));

    expect(await origins.get('g_before')).toEqual({
      grantId: 'g_before',
      givenAt: '2026-11-24T10:00:00.000Z',
      by: 'client:alice',
      client: 'molf-cli/0.1.0',
      sessionId: 's1',
      subjects: ['npm test'],
    });
    expect(await origins.get('g_after')).toMatchObject({ grantId: 'g_after' });
    expect(await origins.get('g_torn')).toBeUndefined();
    expect(await origins.get('g_unnoted')).toBeUndefined();
    origins.note(record('g_later'));
    expect(await origins.get('g_later')).toMatchObject({ grantId: 'g_later' });
  });

  it(`keeps the newest ${MAX_GRANT_ORIGINS} grants and forgets older ones`, async () => {
    await using dir = await createTempDir();
    const path = join(dir.path, 'approvals.jsonl');
    const lines = Array.from({ length: MAX_GRANT_ORIGINS }, (_, index) => JSON.stringify(record(`g_${index}`)));
    await writeFile(path, `${lines.join('\n')}\n`);
    const origins = createGrantOrigins({ path, sizeAtOpen: (await stat(path)).size, logger });
    origins.note(record('g_new'));
    expect(await origins.get('g_0')).toBeUndefined();
    expect(await origins.get('g_1')).toMatchObject({ grantId: 'g_1' });
    expect(await origins.get('g_new')).toMatchObject({ grantId: 'g_new' });
  });

  it('lists grants without their origin when the log cannot be read', async () => {
    await using dir = await createTempDir();
    const origins = createGrantOrigins({ path: join(dir.path, 'gone.jsonl'), sizeAtOpen: 100, logger });
    expect(await origins.get('g_1')).toBeUndefined();
  });
});

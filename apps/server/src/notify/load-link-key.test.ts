import { stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createTempDir } from '../testing/test-link.ts';
import { loadLinkKey } from './load-link-key.ts';

describe('loadLinkKey', () => {
  it('makes a 32-byte key once, private to its owner, and reads the same key afterwards', async () => {
    await using dir = await createTempDir();
    const [first, second] = await Promise.all([loadLinkKey(dir.path), loadLinkKey(dir.path)]);
    expect(first).toHaveLength(32);
    expect(second).toEqual(first);
    expect(await loadLinkKey(dir.path)).toEqual(first);
    expect((await stat(join(dir.path, 'secrets', 'link-key'))).mode & 0o777).toBe(0o600);
    expect((await stat(join(dir.path, 'secrets'))).mode & 0o777).toBe(0o700);
  });

  it('refuses a damaged key file, saying what to do', async () => {
    await using dir = await createTempDir();
    await loadLinkKey(dir.path);
    await writeFile(join(dir.path, 'secrets', 'link-key'), 'short');
    await expect(loadLinkKey(dir.path)).rejects.toMatchObject({
      code: 'config_invalid',
      message: expect.stringMatching(/link-key is damaged .*delete it and restart/),
    });
  });
});

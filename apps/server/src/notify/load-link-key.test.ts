import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openFileStateDocuments } from '../state/index.ts';
import { backendTitle, stateBackends } from '../testing/state-backends.ts';
import { createTempDir } from '../testing/test-link.ts';
import { LINK_KEY_DOCUMENT, loadLinkKey } from './load-link-key.ts';

for (const backend of stateBackends()) {
  describe.skipIf(backend.unavailable !== undefined)(backendTitle('loadLinkKey', backend), () => {
    it('makes a 32-byte key once, the same for every process or instance, even when two start at once', async () => {
      await using place = await backend.prepare();
      const [one, two] = [(await place.open()).documents, (await place.open()).documents];
      const [first, second] = await Promise.all([loadLinkKey(one), loadLinkKey(two)]);
      expect(first).toHaveLength(32);
      expect(second).toEqual(first);
      expect(await loadLinkKey(one)).toEqual(first);
      expect(await loadLinkKey((await place.open()).documents)).toEqual(first);
    });

    it('refuses a damaged key, saying where it is and what to do', async () => {
      await using place = await backend.prepare();
      const documents = (await place.open()).documents;
      await loadLinkKey(documents);
      await documents.write(LINK_KEY_DOCUMENT, 'short');
      await expect(loadLinkKey(documents)).rejects.toMatchObject({
        code: 'config_invalid',
        message: `the link key ${documents.where(LINK_KEY_DOCUMENT)} is damaged (5 bytes, expected 32): delete it and restart; links already sent stop working`,
      });
    });
  });
}

describe('loadLinkKey: files', () => {
  it('keeps the key in a file private to its owner, in a private directory', async () => {
    await using dir = await createTempDir();
    await loadLinkKey(openFileStateDocuments({ dataDir: dir.path }));
    expect((await stat(join(dir.path, 'secrets', 'link-key'))).mode & 0o777).toBe(0o600);
    expect((await stat(join(dir.path, 'secrets'))).mode & 0o777).toBe(0o700);
  });
});

import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { workerCredentials } from './worker-credentials.ts';

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

describe('the client dir’s private files', () => {
  it('lose no change when many are made at once (each read-modify-write holds the file’s lock)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'molf-private-files-'));
    dirs.push(dir);
    // Separate handles, as separate `molf worker --pair` runs would have.
    await Promise.all(
      Array.from({ length: 20 }, (_, index) =>
        workerCredentials(dir).save('wss://molf.example.org:7600', `/projects/p${index}`, {
          token: `molf_w_token-${index}`,
          name: `p${index}`,
          credentialId: `c${index}`,
          savedAt: new Date().toISOString(),
        }),
      ),
    );
    const store = workerCredentials(dir);
    for (let index = 0; index < 20; index += 1) {
      expect(await store.get('wss://molf.example.org:7600', `/projects/p${index}`)).toMatchObject({
        token: `molf_w_token-${index}`,
      });
    }
    expect((await stat(store.path)).mode & 0o777).toBe(0o600);
  });
});

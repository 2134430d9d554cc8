import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createTempDir } from '../testing/test-link.ts';
import { CREDENTIALS_FILE, openCredentialStore } from './credential-store.ts';

describe('credential store', () => {
  it('stores only the hash of a created token and verifies it with its role', async () => {
    await using dir = await createTempDir();
    const store = openCredentialStore({ dataDir: dir.path });
    const { token } = await store.create({ role: 'worker', label: 'laptop' });

    const file = await readFile(join(dir.path, CREDENTIALS_FILE), 'utf8');
    expect(file).not.toContain(token);
    expect(store.verify(token)).toMatchObject({ role: 'worker' });
    expect(store.verify(`${token}x`)).toBeUndefined();
  });

  it('sees tokens created by another process and refuses revoked ones without a restart', async () => {
    await using dir = await createTempDir();
    const server = openCredentialStore({ dataDir: dir.path });
    const cli = openCredentialStore({ dataDir: dir.path });
    const { token, credential } = await cli.create({ role: 'client', label: 'cli' });
    expect(server.verify(token)).toMatchObject({ role: 'client' });

    expect(await cli.revoke(credential.id)).toBe(true);
    expect(server.verify(token)).toBeUndefined();
    expect(await cli.revoke('missing')).toBe(false);
  });

  it('accepts fixed tokens from config without writing them anywhere', async () => {
    await using dir = await createTempDir();
    const store = openCredentialStore({ dataDir: dir.path, fixed: { client: 'molf_c_fixed-client-token-000' } });
    expect(store.verify('molf_c_fixed-client-token-000')).toMatchObject({ role: 'client' });
    expect(store.hasStored('client')).toBe(false);
  });

  it('refuses stored tokens when the credentials file is damaged, naming the file, but keeps fixed ones', async () => {
    await using dir = await createTempDir();
    const store = openCredentialStore({ dataDir: dir.path });
    const { token } = await store.create({ role: 'client', label: 'x' });
    const withFixed = openCredentialStore({ dataDir: dir.path, fixed: { worker: 'molf_w_fixed-worker-token-00' } });
    await writeFile(join(dir.path, CREDENTIALS_FILE), '{"version": 1, "credentials": [');
    expect(() => store.verify(token)).toThrow(/credentials\.json is not valid JSON/);
    expect(store.isActive('any-stored-id')).toBe(false);
    expect(withFixed.verify('molf_w_fixed-worker-token-00')).toMatchObject({ role: 'worker' });
    // A server starting on a damaged file stops with the same clear error.
    expect(() => openCredentialStore({ dataDir: dir.path })).toThrow(/credentials\.json is not valid JSON/);
  });

  it('refuses a minted token as the fixed token, since it could then never be revoked', async () => {
    await using dir = await createTempDir();
    const { token } = await openCredentialStore({ dataDir: dir.path }).create({ role: 'worker', label: 'laptop' });
    expect(() => openCredentialStore({ dataDir: dir.path, fixed: { worker: token } })).toThrow(
      /fixed worker token is a token stored in/,
    );
  });
});

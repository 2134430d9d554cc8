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
    const { token, credential } = await cli.create({ role: 'admin', label: 'cli' });
    expect(server.verify(token)).toMatchObject({ role: 'admin' });

    expect(await cli.revoke(credential.id)).toBe(true);
    expect(server.verify(token)).toBeUndefined();
    expect(await cli.revoke('missing')).toBe(false);
  });

  it('accepts fixed tokens from config without writing them anywhere', async () => {
    await using dir = await createTempDir();
    const store = openCredentialStore({ dataDir: dir.path, fixed: { client: 'molf_c_fixed-client-token-000' } });
    expect(store.verify('molf_c_fixed-client-token-000')).toMatchObject({ role: 'admin' });
    expect(store.hasStored('client')).toBe(false);
  });

  it('refuses stored tokens when the credentials file is damaged, naming the file, but keeps fixed ones', async () => {
    await using dir = await createTempDir();
    const store = openCredentialStore({ dataDir: dir.path });
    const { token } = await store.create({ role: 'admin', label: 'x' });
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

  it('reads a version 1 file, whose one client role could do everything, as admins, and writes version 2 on the next change', async () => {
    await using dir = await createTempDir();
    const first = openCredentialStore({ dataDir: dir.path });
    const { token: clientToken, credential } = await first.create({ role: 'admin', label: 'old laptop' });
    const { token: workerToken } = await first.create({ role: 'worker', label: 'old worker' });
    const path = join(dir.path, CREDENTIALS_FILE);
    const current = JSON.parse(await readFile(path, 'utf8')) as { credentials: Array<{ id: string; role: string }> };
    const v1 = current.credentials.map((entry) => ({
      ...entry,
      role: entry.id === credential.id ? 'client' : 'worker',
    }));
    await writeFile(path, JSON.stringify({ version: 1, credentials: v1 }));

    const store = openCredentialStore({ dataDir: dir.path });
    expect(store.verify(clientToken)).toMatchObject({ role: 'admin' });
    expect(store.verify(workerToken)).toMatchObject({ role: 'worker' });
    await store.create({ role: 'viewer', label: 'wall screen' });
    const saved = JSON.parse(await readFile(path, 'utf8')) as { version: number; credentials: Array<{ role: string }> };
    expect(saved.version).toBe(2);
    expect(saved.credentials.map((entry) => entry.role)).toEqual(['admin', 'worker', 'viewer']);
  });

  it('gives every client role a client token and a worker a worker token', async () => {
    await using dir = await createTempDir();
    const store = openCredentialStore({ dataDir: dir.path });
    for (const role of ['admin', 'operator', 'viewer'] as const) {
      const { token } = await store.create({ role, label: role });
      expect(token.startsWith('molf_c_')).toBe(true);
      expect(store.verify(token)).toMatchObject({ role });
    }
    expect((await store.create({ role: 'worker', label: 'w' })).token.startsWith('molf_w_')).toBe(true);
    expect(store.hasStored('client')).toBe(true);
  });
});

import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startCredentialFilesProcess } from '../testing/run-credential-files-process.ts';
import { createTempDir } from '../testing/test-link.ts';
import { CREDENTIALS_FILE, credentialOrigin, openCredentialStore } from './credential-store.ts';
import { CREDENTIAL_USAGE_FILE } from './credential-usage.ts';

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

  it('records how each credential was made; an older entry is generated if its label says so', async () => {
    await using dir = await createTempDir();
    const store = openCredentialStore({ dataDir: dir.path });
    const { credential } = await store.create({ role: 'viewer', label: 'wall' });
    expect(credential.origin).toBe('created');
    expect((await store.create({ role: 'worker', label: 'box', origin: 'paired' })).credential.origin).toBe('paired');
    const { origin: _, ...older } = credential;
    expect(credentialOrigin(older)).toBe('created');
    expect(credentialOrigin({ ...older, label: 'generated at first start' })).toBe('generated');
  });

  it('notes when a credential last authenticated, and writes it for other processes at close', async () => {
    await using dir = await createTempDir();
    let now = Date.parse('2026-05-01T10:00:00Z');
    const server = openCredentialStore({ dataDir: dir.path, recordUsage: true, now: () => now });
    const { token, credential } = await server.create({ role: 'operator', label: 'laptop' });
    const { credential: unused } = await server.create({ role: 'viewer', label: 'never used' });
    expect(server.list().find((entry) => entry.id === credential.id)?.lastUsedAt).toBeUndefined();

    now += 60_000;
    server.verify(token);
    const listed = server.list();
    expect(listed.find((entry) => entry.id === credential.id)?.lastUsedAt).toBe('2026-05-01T10:01:00.000Z');
    expect(listed.find((entry) => entry.id === unused.id)?.lastUsedAt).toBeUndefined();

    const cli = openCredentialStore({ dataDir: dir.path });
    await server.close();
    expect(cli.list().find((entry) => entry.id === credential.id)?.lastUsedAt).toBe('2026-05-01T10:01:00.000Z');
    // A reader never writes the file, and a revoked credential's time leaves it at the next write.
    await server.revoke(credential.id);
    const { token: other } = await server.create({ role: 'viewer', label: 'other' });
    server.verify(other);
    await server.close();
    const file = JSON.parse(await readFile(join(dir.path, CREDENTIAL_USAGE_FILE), 'utf8')) as {
      lastUsedAt: Record<string, string>;
    };
    expect(Object.keys(file.lastUsedAt)).toHaveLength(1);
    expect(file.lastUsedAt[credential.id]).toBeUndefined();
  });

  it('reads last-used times from a damaged usage file as not known', async () => {
    await using dir = await createTempDir();
    const store = openCredentialStore({ dataDir: dir.path });
    await store.create({ role: 'viewer', label: 'x' });
    await writeFile(join(dir.path, CREDENTIAL_USAGE_FILE), '{');
    expect(store.list()[0]?.lastUsedAt).toBeUndefined();
  });

  it('loses no credential when two processes add some at the same time', async () => {
    await using dir = await createTempDir();
    const here = openCredentialStore({ dataDir: dir.path });
    await using other = await startCredentialFilesProcess(['create', dir.path, '10']);
    const [theirs] = await Promise.all([
      other.go() as Promise<{ ids: string[] }>,
      (async () => {
        for (let index = 0; index < 10; index += 1) await here.create({ role: 'viewer', label: `here ${index}` });
      })(),
    ]);
    const ids = here.list().map((credential) => credential.id);
    expect(ids).toHaveLength(20);
    expect(ids).toEqual(expect.arrayContaining(theirs.ids));
  });
});

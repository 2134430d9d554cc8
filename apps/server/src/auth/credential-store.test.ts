import { describe, expect, it } from 'vitest';
import { openFileStateDocuments, type StateDocuments } from '../state/index.ts';
import { startCredentialFilesProcess } from '../testing/run-credential-files-process.ts';
import { backendTitle, stateBackends } from '../testing/state-backends.ts';
import { createTempDir, waitFor } from '../testing/test-link.ts';
import { CREDENTIALS_FILE, credentialOrigin, openCredentialStore } from './credential-store.ts';
import { CREDENTIAL_USAGE_FILE } from './credential-usage.ts';

/** The ids in the credentials document as it is now, whatever any opener knows. */
async function storedIds(documents: StateDocuments): Promise<string[]> {
  const text = (await documents.read(CREDENTIALS_FILE)) ?? '{"credentials":[]}';
  return (JSON.parse(text) as { credentials: Array<{ id: string }> }).credentials.map((entry) => entry.id);
}

for (const backend of stateBackends()) {
  describe.skipIf(backend.unavailable !== undefined)(backendTitle('credential store', backend), () => {
    it('stores only the hash of a created token and verifies it with its role', async () => {
      await using place = await backend.prepare();
      const documents = (await place.open()).documents;
      const store = openCredentialStore({ documents });
      const { token } = await store.create({ role: 'worker', label: 'laptop' });

      const stored = await documents.read(CREDENTIALS_FILE);
      expect(stored).toContain('"laptop"');
      expect(stored).not.toContain(token);
      expect(store.verify(token)).toMatchObject({ role: 'worker' });
      expect(store.verify(`${token}x`)).toBeUndefined();
    });

    it('sees tokens created by another process or instance at once when read now, and refuses revoked ones without a restart', async () => {
      await using place = await backend.prepare();
      const server = openCredentialStore({ documents: (await place.open()).documents });
      const cli = openCredentialStore({ documents: (await place.open()).documents });
      const { token, credential } = await cli.create({ role: 'admin', label: 'cli' });
      expect(await server.verifyLatest(token)).toEqual({ role: 'admin', credentialId: credential.id });
      await waitFor(() => server.verify(token) !== undefined, { what: 'the new credential to be known' });
      expect(server.isActive(credential.id)).toBe(true);

      expect(await cli.revoke(credential.id)).toBe(true);
      await waitFor(() => !server.isActive(credential.id), { what: 'the revocation to be known' });
      expect(server.verify(token)).toBeUndefined();
      expect(await server.verifyLatest(token)).toBeUndefined();
      expect(await cli.revoke('missing')).toBe(false);
    });

    it('accepts fixed tokens from config without writing them anywhere', async () => {
      await using place = await backend.prepare();
      const documents = (await place.open()).documents;
      const store = openCredentialStore({ documents, fixed: { client: 'molf_c_fixed-client-token-000' } });
      expect(store.verify('molf_c_fixed-client-token-000')).toMatchObject({ role: 'admin' });
      expect(await store.verifyLatest('molf_c_fixed-client-token-000')).toMatchObject({ role: 'admin' });
      expect(store.hasStored('client')).toBe(false);
      expect(await documents.read(CREDENTIALS_FILE)).toBeUndefined();
    });

    it('refuses every stored token while the credentials document is damaged, naming where it is, but keeps fixed ones', async () => {
      await using place = await backend.prepare();
      const [here, elsewhere] = [(await place.open()).documents, (await place.open()).documents];
      const store = openCredentialStore({ documents: here });
      const { token, credential } = await store.create({ role: 'admin', label: 'x' });
      const other = openCredentialStore({ documents: elsewhere, fixed: { worker: 'molf_w_fixed-worker-token-00' } });
      await waitFor(() => other.isActive(credential.id), { what: 'the credential to be known elsewhere' });

      await here.write(CREDENTIALS_FILE, '{"version": 1, "credentials": [');
      const invalid = `${here.where(CREDENTIALS_FILE)} is not valid JSON`;
      expect(() => store.verify(token)).toThrow(invalid);
      await expect(store.verifyLatest(token)).rejects.toThrow(invalid);
      expect(store.isActive(credential.id)).toBe(false);
      // Everyone else too, once they hear of the change; fixed tokens still let `molf up` in.
      await waitFor(() => !other.isActive(credential.id), { what: 'the damage to be known elsewhere' });
      expect(() => other.verify(token)).toThrow(/credentials\.json.* is not valid JSON/);
      expect(other.verify('molf_w_fixed-worker-token-00')).toMatchObject({ role: 'worker' });
      // A server starting on a damaged document stops with the same clear error.
      const starting = (await place.open()).documents;
      expect(() => openCredentialStore({ documents: starting })).toThrow(invalid);
    });

    it('refuses a minted token as the fixed token, since it could then never be revoked', async () => {
      await using place = await backend.prepare();
      const documents = (await place.open()).documents;
      const { token } = await openCredentialStore({ documents }).create({ role: 'worker', label: 'laptop' });
      expect(() => openCredentialStore({ documents, fixed: { worker: token } })).toThrow(
        `fixed worker token is a token stored in ${documents.where(CREDENTIALS_FILE)}`,
      );
    });

    it('reads a version 1 document, whose one client role could do everything, as admins, and writes version 2 on the next change', async () => {
      await using place = await backend.prepare();
      const documents = (await place.open()).documents;
      const first = openCredentialStore({ documents });
      const { token: clientToken, credential } = await first.create({ role: 'admin', label: 'old laptop' });
      const { token: workerToken } = await first.create({ role: 'worker', label: 'old worker' });
      const current = JSON.parse((await documents.read(CREDENTIALS_FILE)) ?? '') as {
        credentials: Array<{ id: string; role: string }>;
      };
      const v1 = current.credentials.map((entry) => ({
        ...entry,
        role: entry.id === credential.id ? 'client' : 'worker',
      }));
      await documents.write(CREDENTIALS_FILE, JSON.stringify({ version: 1, credentials: v1 }));

      const store = openCredentialStore({ documents });
      expect(store.verify(clientToken)).toMatchObject({ role: 'admin' });
      expect(store.verify(workerToken)).toMatchObject({ role: 'worker' });
      await store.create({ role: 'viewer', label: 'wall screen' });
      const saved = JSON.parse((await documents.read(CREDENTIALS_FILE)) ?? '') as {
        version: number;
        credentials: Array<{ role: string }>;
      };
      expect(saved.version).toBe(2);
      expect(saved.credentials.map((entry) => entry.role)).toEqual(['admin', 'worker', 'viewer']);
    });

    it('gives every client role a client token and a worker a worker token', async () => {
      await using place = await backend.prepare();
      const store = openCredentialStore({ documents: (await place.open()).documents });
      for (const role of ['admin', 'operator', 'viewer'] as const) {
        const { token } = await store.create({ role, label: role });
        expect(token.startsWith('molf_c_')).toBe(true);
        expect(store.verify(token)).toMatchObject({ role });
      }
      expect((await store.create({ role: 'worker', label: 'w' })).token.startsWith('molf_w_')).toBe(true);
      expect(store.hasStored('client')).toBe(true);
    });

    it('records how each credential was made; an older entry is generated if its label says so', async () => {
      await using place = await backend.prepare();
      const store = openCredentialStore({ documents: (await place.open()).documents });
      const { credential } = await store.create({ role: 'viewer', label: 'wall' });
      expect(credential.origin).toBe('created');
      expect((await store.create({ role: 'worker', label: 'box', origin: 'paired' })).credential.origin).toBe('paired');
      const { origin: _, ...older } = credential;
      expect(credentialOrigin(older)).toBe('created');
      expect(credentialOrigin({ ...older, label: 'generated at first start' })).toBe('generated');
    });

    it('refuses a second credential with an id already stored, naming where', async () => {
      await using place = await backend.prepare();
      const documents = (await place.open()).documents;
      const store = openCredentialStore({ documents });
      await store.create({ role: 'worker', label: 'box', id: 'abcd1234' });
      await expect(store.create({ role: 'worker', label: 'other', id: 'abcd1234' })).rejects.toMatchObject({
        code: 'conflict',
        message: `a credential with id abcd1234 exists already in ${documents.where(CREDENTIALS_FILE)}`,
      });
    });

    it('notes when a credential last authenticated, and writes it for other processes and instances at close', async () => {
      await using place = await backend.prepare();
      const [serverDocuments, cliDocuments] = [(await place.open()).documents, (await place.open()).documents];
      let now = Date.parse('2026-05-01T10:00:00Z');
      const server = openCredentialStore({ documents: serverDocuments, recordUsage: true, now: () => now });
      const { token, credential } = await server.create({ role: 'operator', label: 'laptop' });
      const { credential: unused } = await server.create({ role: 'viewer', label: 'never used' });
      expect(server.list().find((entry) => entry.id === credential.id)?.lastUsedAt).toBeUndefined();

      now += 60_000;
      server.verify(token);
      const listed = server.list();
      expect(listed.find((entry) => entry.id === credential.id)?.lastUsedAt).toBe('2026-05-01T10:01:00.000Z');
      expect(listed.find((entry) => entry.id === unused.id)?.lastUsedAt).toBeUndefined();

      const cli = openCredentialStore({ documents: cliDocuments });
      await server.close();
      await waitFor(
        () => cli.list().find((entry) => entry.id === credential.id)?.lastUsedAt === '2026-05-01T10:01:00.000Z',
        { what: 'the last-used time to be known to the other opener' },
      );
      // A reader never writes the document, and a revoked credential's time leaves it at the next write.
      await cli.close();
      await server.revoke(credential.id);
      const { token: other } = await server.create({ role: 'viewer', label: 'other' });
      server.verify(other);
      await server.close();
      const usage = JSON.parse((await cliDocuments.read(CREDENTIAL_USAGE_FILE)) ?? '') as {
        lastUsedAt: Record<string, string>;
      };
      expect(Object.keys(usage.lastUsedAt)).toHaveLength(1);
      expect(usage.lastUsedAt[credential.id]).toBeUndefined();
    });

    it('keeps the last-used times that two servers write, each its own', async () => {
      await using place = await backend.prepare();
      const [oneDocuments, twoDocuments] = [(await place.open()).documents, (await place.open()).documents];
      const one = openCredentialStore({ documents: oneDocuments, recordUsage: true, now: () => 1_000 });
      const { token: first, credential: firstCredential } = await one.create({ role: 'viewer', label: 'a' });
      const two = openCredentialStore({ documents: twoDocuments, recordUsage: true, now: () => 2_000 });
      const { token: second, credential: secondCredential } = await two.create({ role: 'viewer', label: 'b' });
      await waitFor(() => one.isActive(secondCredential.id) && two.isActive(firstCredential.id), {
        what: 'both credentials to be known to both',
      });
      one.verify(first);
      two.verify(second);
      await Promise.all([one.close(), two.close()]);
      const usage = JSON.parse((await oneDocuments.read(CREDENTIAL_USAGE_FILE)) ?? '') as {
        lastUsedAt: Record<string, string>;
      };
      expect(usage.lastUsedAt).toEqual({
        [firstCredential.id]: new Date(1_000).toISOString(),
        [secondCredential.id]: new Date(2_000).toISOString(),
      });
    });

    it('reads last-used times from a damaged usage document as not known', async () => {
      await using place = await backend.prepare();
      const documents = (await place.open()).documents;
      const store = openCredentialStore({ documents });
      await store.create({ role: 'viewer', label: 'x' });
      await documents.write(CREDENTIAL_USAGE_FILE, '{');
      expect(store.list()[0]?.lastUsedAt).toBeUndefined();
    });

    it('loses no credential when two processes or instances add some at the same time', async () => {
      await using place = await backend.prepare();
      const [oneDocuments, twoDocuments] = [(await place.open()).documents, (await place.open()).documents];
      const one = openCredentialStore({ documents: oneDocuments });
      const two = openCredentialStore({ documents: twoDocuments });
      const addTen = async (store: typeof one, name: string) => {
        const ids: string[] = [];
        for (let index = 0; index < 10; index += 1) {
          ids.push((await store.create({ role: 'viewer', label: `${name} ${index}` })).credential.id);
        }
        return ids;
      };
      const [ones, twos] = await Promise.all([addTen(one, 'one'), addTen(two, 'two')]);
      const ids = await storedIds(oneDocuments);
      expect(ids).toHaveLength(20);
      expect(ids).toEqual(expect.arrayContaining([...ones, ...twos]));
    });
  });
}

describe('credential store: files', () => {
  it('loses no credential when two processes add some at the same time', async () => {
    await using dir = await createTempDir();
    const documents = openFileStateDocuments({ dataDir: dir.path });
    const here = openCredentialStore({ documents });
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

  it('sees a token another process created at once, without reading it again', async () => {
    await using dir = await createTempDir();
    const server = openCredentialStore({ documents: openFileStateDocuments({ dataDir: dir.path }) });
    const cli = openCredentialStore({ documents: openFileStateDocuments({ dataDir: dir.path }) });
    const { token, credential } = await cli.create({ role: 'admin', label: 'cli' });
    expect(server.verify(token)).toMatchObject({ role: 'admin' });
    expect(await cli.revoke(credential.id)).toBe(true);
    expect(server.verify(token)).toBeUndefined();
  });
});

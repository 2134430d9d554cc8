import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { MolfError } from '@molf/protocol';
import { describe, expect, it } from 'vitest';
import { CREDENTIALS_FILE, openCredentialStore } from '../auth/credential-store.ts';
import { openFileStateDocuments, type StateDocuments } from '../state/index.ts';
import { startCredentialFilesProcess } from '../testing/run-credential-files-process.ts';
import { backendTitle, stateBackends } from '../testing/state-backends.ts';
import { createTempDir } from '../testing/test-link.ts';
import { openPairingCodeStore, PAIRING_CODES_FILE } from './pairing-code-store.ts';
import { safeParsePairingCode } from './pairing-code-text.ts';

const START = Date.parse('2026-05-01T10:00:00Z');

function canonical(code: string): string {
  const parsed = safeParsePairingCode(code);
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.value;
}

function openStores(documents: StateDocuments, start = START) {
  let now = start;
  const credentials = openCredentialStore({ documents, now: () => now });
  const pairing = openPairingCodeStore({ documents, credentials, now: () => now });
  return {
    credentials,
    pairing,
    advance(ms: number) {
      now += ms;
    },
  };
}

for (const backend of stateBackends()) {
  describe.skipIf(backend.unavailable !== undefined)(backendTitle('pairing codes', backend), () => {
    it('makes a code that becomes a credential of its role, once, stored only as a hash', async () => {
      await using place = await backend.prepare();
      const documents = (await place.open()).documents;
      const { credentials, pairing } = openStores(documents);
      const made = await pairing.create({ role: 'worker', name: 'build-box' });
      expect(made).toMatchObject({ role: 'worker', name: 'build-box', expiresAt: '2026-05-01T10:05:00.000Z' });
      expect(made.code).toMatch(/^[0-9A-Z]{4}-[0-9A-Z]{4}$/);

      const text = await documents.read(PAIRING_CODES_FILE);
      expect(text).toContain('build-box');
      expect(text).not.toContain(canonical(made.code));
      expect(text).not.toContain(made.code);

      const redeemed = await pairing.redeem({ code: canonical(made.code), kind: 'worker', name: 'ignored' });
      if (redeemed.type !== 'paired') throw new Error(`not paired: ${redeemed.type}`);
      // The code's name wins over the redeemer's.
      expect(redeemed.credential).toMatchObject({ role: 'worker', label: 'build-box', origin: 'paired' });
      expect(credentials.verify(redeemed.token)).toEqual({ role: 'worker', credentialId: redeemed.credential.id });

      expect(await pairing.redeem({ code: canonical(made.code), kind: 'worker', name: 'again' })).toEqual({
        type: 'used',
        usedAt: '2026-05-01T10:00:00.000Z',
      });
      expect(credentials.list()).toHaveLength(1);
    });

    it('names the credential after the redeemer when the code carries no name', async () => {
      await using place = await backend.prepare();
      const { pairing } = openStores((await place.open()).documents);
      const made = await pairing.create({ role: 'operator' });
      expect(await pairing.redeem({ code: canonical(made.code), kind: 'client', name: 'laptop' })).toMatchObject({
        type: 'paired',
        credential: { role: 'operator', label: 'laptop' },
      });
    });

    it('refuses a code after its 5 minutes, and one that never was', async () => {
      await using place = await backend.prepare();
      const documents = (await place.open()).documents;
      const { pairing, advance } = openStores(documents);
      const made = await pairing.create({ role: 'viewer' });
      advance(5 * 60_000);
      expect(await pairing.redeem({ code: canonical(made.code), kind: 'client', name: 'late' })).toEqual({
        type: 'expired',
        expiredAt: '2026-05-01T10:05:00.000Z',
      });
      const other = canonical(made.code) === '00000000' ? '00000001' : '00000000';
      expect(await pairing.redeem({ code: other, kind: 'client', name: 'guess' })).toEqual({ type: 'unknown' });
      expect(await pairing.list()).toEqual([]);
    });

    it('keeps a code of the other kind live: a client cannot use up a worker code', async () => {
      await using place = await backend.prepare();
      const { pairing } = openStores((await place.open()).documents);
      const made = await pairing.create({ role: 'worker' });
      expect(await pairing.redeem({ code: canonical(made.code), kind: 'client', name: 'laptop' })).toEqual({
        type: 'wrong_kind',
        role: 'worker',
      });
      expect(await pairing.redeem({ code: canonical(made.code), kind: 'worker', name: 'box' })).toMatchObject({
        type: 'paired',
      });
    });

    it('keeps at most 5 live codes and says when the oldest expires', async () => {
      await using place = await backend.prepare();
      const documents = (await place.open()).documents;
      const { pairing, advance } = openStores(documents);
      for (let index = 0; index < 5; index += 1) {
        await pairing.create({ role: 'viewer', name: `screen ${index}` });
        advance(10_000);
      }
      const sixth = pairing.create({ role: 'viewer' });
      await expect(sixth).rejects.toBeInstanceOf(MolfError);
      await expect(sixth).rejects.toMatchObject({
        code: 'busy',
        message: expect.stringContaining('the oldest expires at 2026-05-01T10:05:00.000Z (in 4 min 10 s)'),
      });
      // Listed without their codes, oldest first.
      const live = await pairing.list();
      expect(live.map((code) => code.name)).toEqual(['screen 0', 'screen 1', 'screen 2', 'screen 3', 'screen 4']);
      expect(JSON.stringify(live)).not.toMatch(/[0-9A-Z]{4}-[0-9A-Z]{4}/);
      // A cancelled code frees its place, and cannot be redeemed.
      expect(await pairing.cancel(live[0]?.id ?? '')).toBe(true);
      expect(await pairing.cancel(live[0]?.id ?? '')).toBe(false);
      await expect(pairing.create({ role: 'viewer' })).resolves.toMatchObject({ role: 'viewer' });
    });

    it('says a cancelled code was cancelled', async () => {
      await using place = await backend.prepare();
      const { pairing } = openStores((await place.open()).documents);
      const made = await pairing.create({ role: 'admin' });
      await pairing.cancel(made.id);
      expect(await pairing.redeem({ code: canonical(made.code), kind: 'client', name: 'x' })).toEqual({
        type: 'cancelled',
        cancelledAt: '2026-05-01T10:00:00.000Z',
      });
    });

    it('remembers ended codes for a day to say why they fail, then forgets them', async () => {
      await using place = await backend.prepare();
      const documents = (await place.open()).documents;
      const { pairing, advance } = openStores(documents);
      const used = await pairing.create({ role: 'worker' });
      await pairing.redeem({ code: canonical(used.code), kind: 'worker', name: 'box' });
      advance(23 * 60 * 60_000);
      await pairing.create({ role: 'worker' });
      expect(await pairing.redeem({ code: canonical(used.code), kind: 'worker', name: 'box' })).toMatchObject({
        type: 'used',
      });
      advance(2 * 60 * 60_000);
      await pairing.create({ role: 'worker' });
      expect(await pairing.redeem({ code: canonical(used.code), kind: 'worker', name: 'box' })).toEqual({
        type: 'unknown',
      });
      const file = JSON.parse((await documents.read(PAIRING_CODES_FILE)) ?? '') as { codes: unknown[] };
      expect(file.codes).toHaveLength(2);
    });

    it('refuses every redemption and every new code while the document is damaged, naming where it is and leaving it as it is', async () => {
      await using place = await backend.prepare();
      const documents = (await place.open()).documents;
      const { pairing, credentials } = openStores(documents);
      const made = await pairing.create({ role: 'admin' });
      const where = documents.where(PAIRING_CODES_FILE);
      const damaged = ((await documents.read(PAIRING_CODES_FILE)) ?? '').replace('"role": "admin"', '"role": "root"');
      await documents.write(PAIRING_CODES_FILE, damaged);

      const redemption = pairing.redeem({ code: canonical(made.code), kind: 'client', name: 'x' });
      await expect(redemption).rejects.toMatchObject({ code: 'config_invalid' });
      await expect(redemption).rejects.toThrow(`${where} is damaged`);
      await expect(pairing.create({ role: 'viewer' })).rejects.toThrow(`${where} is damaged`);
      await expect(pairing.list()).rejects.toThrow(`${where} is damaged`);
      await documents.write(PAIRING_CODES_FILE, '{"version": 1, "codes": [');
      await expect(pairing.redeem({ code: canonical(made.code), kind: 'client', name: 'x' })).rejects.toThrow(
        /is damaged: not valid JSON/,
      );
      expect(await documents.read(PAIRING_CODES_FILE)).toBe('{"version": 1, "codes": [');
      expect(credentials.list()).toEqual([]);
    });

    it('gives the code back when its credential cannot be written', async () => {
      await using place = await backend.prepare();
      const documents = (await place.open()).documents;
      const { pairing, credentials } = openStores(documents);
      const made = await pairing.create({ role: 'worker' });
      await documents.write(CREDENTIALS_FILE, 'not json');
      await expect(pairing.redeem({ code: canonical(made.code), kind: 'worker', name: 'box' })).rejects.toThrow(
        `${documents.where(CREDENTIALS_FILE)} is not valid JSON`,
      );
      await documents.write(CREDENTIALS_FILE, JSON.stringify({ version: 2, credentials: [] }));
      expect(await pairing.list()).toHaveLength(1);
      expect(await pairing.redeem({ code: canonical(made.code), kind: 'worker', name: 'box' })).toMatchObject({
        type: 'paired',
      });
      expect(credentials.list()).toHaveLength(1);
    });

    it('lets one of two simultaneous redemptions of a code win, on two processes or instances: one credential, one refusal', async () => {
      await using place = await backend.prepare();
      const [here, elsewhere] = [(await place.open()).documents, (await place.open()).documents];
      const one = openStores(here);
      const two = openStores(elsewhere);
      const made = await one.pairing.create({ role: 'worker' });
      const code = canonical(made.code);

      const outcomes = await Promise.all([
        one.pairing.redeem({ code, kind: 'worker', name: 'one' }),
        two.pairing.redeem({ code, kind: 'worker', name: 'two' }),
      ]);

      expect(outcomes.map((outcome) => outcome.type).sort()).toEqual(['paired', 'used']);
      const credentials = JSON.parse((await here.read(CREDENTIALS_FILE)) ?? '') as { credentials: unknown[] };
      expect(credentials.credentials).toHaveLength(1);
    });
  });
}

describe('pairing codes: files', () => {
  it('keeps the codes in a file private to its owner', async () => {
    await using dir = await createTempDir();
    const { pairing } = openStores(openFileStateDocuments({ dataDir: dir.path }));
    await pairing.create({ role: 'worker' });
    expect((await stat(join(dir.path, PAIRING_CODES_FILE))).mode & 0o777).toBe(0o600);
  });

  it('lets exactly one of many simultaneous redemptions of a code win: in this process, a second store and other processes', async () => {
    await using dir = await createTempDir();
    // The other stores and processes read the real clock: the code must be live on it too.
    const { pairing, credentials } = openStores(openFileStateDocuments({ dataDir: dir.path }), Date.now());
    const made = await pairing.create({ role: 'worker' });
    const code = canonical(made.code);
    const secondDocuments = openFileStateDocuments({ dataDir: dir.path });
    const secondStore = openPairingCodeStore({
      documents: secondDocuments,
      credentials: openCredentialStore({ documents: secondDocuments }),
    });
    await using first = await startCredentialFilesProcess(['redeem', dir.path, code, 'worker', 'child 1']);
    await using second = await startCredentialFilesProcess(['redeem', dir.path, code, 'worker', 'child 2']);

    const outcomes = (await Promise.all([
      first.go(),
      second.go(),
      pairing.redeem({ code, kind: 'worker', name: 'here 1' }),
      pairing.redeem({ code, kind: 'worker', name: 'here 2' }),
      secondStore.redeem({ code, kind: 'worker', name: 'second store' }),
    ])) as Array<{ type: string }>;

    expect(outcomes.map((outcome) => outcome.type).sort()).toEqual(['paired', 'used', 'used', 'used', 'used']);
    expect(credentials.list()).toHaveLength(1);
  });
});

import { createSilentLogger } from '@molf/logging';
import { describe, expect, it } from 'vitest';
import { type Database, openDatabase } from '../database/index.ts';
import { createTestDatabase, postgresUnavailable } from '../testing/test-database.ts';
import { createTempDir, waitFor } from '../testing/test-link.ts';
import { openFileStateDocuments } from './file-state-documents.ts';
import { openPostgresStateDocuments } from './postgres-state-documents.ts';
import type { StateDocuments } from './state-documents.ts';

const logger = createSilentLogger();

/** A place two openers share: two processes on one data dir, or two instances on one database. */
type Place = AsyncDisposable & { open(): Promise<StateDocuments> };

const backends: Array<{ name: string; unavailable?: string | undefined; prepare(): Promise<Place> }> = [
  {
    name: 'files',
    async prepare() {
      const dir = await createTempDir();
      const opened: StateDocuments[] = [];
      return {
        async open() {
          const documents = openFileStateDocuments({ dataDir: dir.path, logger });
          opened.push(documents);
          return documents;
        },
        async [Symbol.asyncDispose]() {
          for (const documents of opened) await documents.close();
          await dir[Symbol.asyncDispose]();
        },
      };
    },
  },
  {
    name: 'PostgreSQL',
    unavailable: postgresUnavailable(),
    async prepare() {
      const created = await createTestDatabase();
      const opened: Array<{ database: Database; documents: StateDocuments }> = [];
      return {
        async open() {
          const database = await openDatabase({ url: created.url, logger, maxConnections: 4 });
          const documents = await openPostgresStateDocuments({ database, logger });
          opened.push({ database, documents });
          return documents;
        },
        async [Symbol.asyncDispose]() {
          for (const { database, documents } of opened) {
            await documents.close();
            await database.close();
          }
          await created[Symbol.asyncDispose]();
        },
      };
    },
  },
];

for (const backend of backends) {
  const suite = backend.unavailable === undefined ? describe : describe.skip;
  suite(`state documents: ${backend.name}${backend.unavailable === undefined ? '' : ` (skipped: ${backend.unavailable})`}`, () => {
    it('writes, reads, replaces and removes a document, text or bytes', async () => {
      await using place = await backend.prepare();
      const documents = await place.open();
      expect(await documents.read('credentials.json')).toBeUndefined();
      await documents.write('credentials.json', '{"version":2}\n');
      expect(await documents.read('credentials.json')).toBe('{"version":2}\n');
      await documents.write('credentials.json', 'é 🦊 \u0000');
      expect(await documents.read('credentials.json')).toBe('é 🦊 \u0000');
      await documents.write('secrets/link-key', new Uint8Array([0, 255, 1]));
      expect([...((await documents.readBytes('secrets/link-key')) ?? [])]).toEqual([0, 255, 1]);
      await documents.remove('credentials.json');
      await documents.remove('credentials.json');
      expect(await documents.read('credentials.json')).toBeUndefined();
    });

    it('knows each of its own writes at once, though the announcements of the ones before are still read', async () => {
      await using place = await backend.prepare();
      const documents = await place.open();
      // Each write's announcement makes the opener read the document back; a read begun before the
      // next write must not put the older text back over it.
      for (let index = 0; index < 200; index += 1) {
        await documents.write('credentials.json', `{"n":${index}}`);
        expect(documents.known('credentials.json').text).toBe(`{"n":${index}}`);
        // The read-back of an earlier write may land now: it must not take the place of this one.
        await new Promise((resolveLater) => setTimeout(resolveLater, index % 4));
        expect(documents.known('credentials.json').text).toBe(`{"n":${index}}`);
      }
    });

    it('creates a document only when there is none, whoever tries first', async () => {
      await using place = await backend.prepare();
      const [one, two] = [await place.open(), await place.open()];
      const results = await Promise.all([one.create('secrets/key', 'first'), two.create('secrets/key', 'second')]);
      expect(results.filter(Boolean)).toHaveLength(1);
      const kept = await one.read('secrets/key');
      expect(kept === 'first' || kept === 'second').toBe(true);
      expect(await two.create('secrets/key', 'third')).toBe(false);
      expect(await two.read('secrets/key')).toBe(kept);
    });

    it('lists the documents under a prefix, sorted', async () => {
      await using place = await backend.prepare();
      const documents = await place.open();
      for (const name of [
        'workers/b/state.json',
        'workers/a/permissions.jsonc',
        'workers/a/state.json',
        'cron/jobs.json',
      ]) {
        await documents.write(name, '{}');
      }
      expect(await documents.list('workers/')).toEqual([
        'workers/a/permissions.jsonc',
        'workers/a/state.json',
        'workers/b/state.json',
      ]);
      expect(await documents.list('nothing/')).toEqual([]);
    });

    it('lists every document while others under the prefix are being locked and let go', async () => {
      await using place = await backend.prepare();
      const [one, two] = [await place.open(), await place.open()];
      const names = Array.from({ length: 5 }, (_, index) => `workers/w${index}/state.json`);
      for (const name of names) await one.write(name, '{}');
      let locking = true;
      const churn = (async () => {
        while (locking) await Promise.all(names.map((name) => two.lock(name, async () => {})));
      })();
      try {
        for (let round = 0; round < 30; round += 1) expect(await one.list('workers/')).toEqual(names);
      } finally {
        locking = false;
        await churn;
      }
    });

    it('tells a watcher of a document in a folder that only its first write makes', async () => {
      await using place = await backend.prepare();
      const [one, two] = [await place.open(), await place.open()];
      let changes = 0;
      const stop = two.watch('workers/new/permissions.jsonc', () => {
        changes += 1;
      });
      try {
        await one.write('workers/new/permissions.jsonc', '{}');
        await waitFor(() => changes > 0, { what: 'a change event' });
      } finally {
        stop();
      }
    });

    it('loses no change when two openers change one document at once under its lock', async () => {
      await using place = await backend.prepare();
      const [one, two] = [await place.open(), await place.open()];
      const increment = (documents: StateDocuments) =>
        documents.lock('counter.json', async () => {
          const count = Number((await documents.read('counter.json')) ?? '0');
          await new Promise((resolveLater) => setTimeout(resolveLater, 2));
          await documents.write('counter.json', String(count + 1));
        });
      await Promise.all(Array.from({ length: 10 }, (_, index) => increment(index % 2 === 0 ? one : two)));
      expect(await one.read('counter.json')).toBe('10');
    });

    it('runs many locks of different documents at once, and a lock taken inside another, with a small pool', async () => {
      await using place = await backend.prepare();
      const documents = await place.open();
      // Twelve workers registering together: each locks its own document, reads it and writes it.
      const register = (index: number) =>
        documents.lock(`workers/w${index}/state.json`, async () => {
          await documents.read(`workers/w${index}/state.json`);
          await new Promise((resolveLater) => setTimeout(resolveLater, 5));
          await documents.write(`workers/w${index}/state.json`, `{"n":${index}}`);
          // A pairing code redeemed makes a credential: a second lock inside the first.
          await documents.lock(`credentials-${index % 3}.json`, () =>
            documents.write(`credentials-${index % 3}.json`, String(index)),
          );
        });
      let timer: NodeJS.Timeout | undefined;
      const hung = new Promise((_resolve, reject) => {
        timer = setTimeout(() => reject(new Error('the locks hung')), 60_000);
      });
      try {
        await Promise.race([Promise.all(Array.from({ length: 12 }, (_, index) => register(index))), hung]);
      } finally {
        clearTimeout(timer);
      }
      expect(await documents.list('workers/')).toHaveLength(12);
    });

    it('tells a prefix watcher the name of each document that appears or changes under it, on another opener', async () => {
      await using place = await backend.prepare();
      const [one, two] = [await place.open(), await place.open()];
      const seen = new Set<string>();
      const stop = two.watchPrefix('workers/', (name) => seen.add(name));
      await one.write('workers/new-one/state.json', '{}');
      await one.write('cron/jobs.json', '{}');
      await waitFor(() => seen.has('workers/new-one/state.json'), { what: 'the new worker state, named' });
      expect([...seen].every((name) => name.startsWith('workers/'))).toBe(true);
      stop();
    });

    it('tells a watcher, and updates what another opener knows, when a document changes', async () => {
      await using place = await backend.prepare();
      const [one, two] = [await place.open(), await place.open()];
      await one.write('workers/w1/permissions.jsonc', '{ "rules": [] }');
      let changes = 0;
      const stop = two.watch('workers/w1/permissions.jsonc', () => {
        changes += 1;
      });
      await waitFor(() => two.known('workers/w1/permissions.jsonc').text === '{ "rules": [] }', {
        what: 'the first text',
      });
      const before = two.known('workers/w1/permissions.jsonc').version;
      await one.write('workers/w1/permissions.jsonc', '{ "rules": [1] }');
      await waitFor(() => changes > 0, { what: 'a change event' });
      await waitFor(() => two.known('workers/w1/permissions.jsonc').text === '{ "rules": [1] }', {
        what: 'the new text',
      });
      expect(two.known('workers/w1/permissions.jsonc').version).not.toBe(before);
      stop();
      expect(two.known('nothing.json')).toEqual({ text: undefined, version: 'none' });
    });
  });
}

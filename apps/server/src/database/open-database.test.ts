import { createSilentLogger } from '@molf/logging';
import type { WorkerId } from '@molf/protocol';
import { startPostgresCluster } from '@molf/testkit';
import { describe, expect, it } from 'vitest';
import { createPostgresSessionStore } from '../sessions/postgres-session-store.ts';
import { createTestDatabase, postgresUnavailable } from '../testing/test-database.ts';
import { openDatabase } from './open-database.ts';
import { MIGRATIONS, type Migration } from './schema-migrations.ts';

const logger = createSilentLogger();
const unavailable = postgresUnavailable();

describe('database URL checks (no database needed)', () => {
  it('refuses a URL that is not a postgres:// one before connecting, and never echoes a password', async () => {
    await expect(openDatabase({ url: 'not a url', logger })).rejects.toMatchObject({
      code: 'config_invalid',
      message: expect.stringContaining('postgres://user:password@host:port/database'),
    });
    const error = await openDatabase({ url: 'mysql://root:s3cret@db/molf', logger }).catch((caught: Error) => caught);
    expect(error).toMatchObject({
      code: 'config_invalid',
      message: expect.stringContaining('must start with postgres://'),
    });
    expect((error as Error).message).not.toContain('s3cret');
  });

  it('names the part of the URL with a malformed %-escape, never the password itself', async () => {
    for (const [url, part] of [
      ['postgres://mo%zzlf:pw@127.0.0.1:1/molf', 'user name'],
      ['postgres://molf:se%zzcret@127.0.0.1:1/molf', 'password'],
      ['postgres://molf:pw@127.0.0.1:1/mo%zzlf', 'database name'],
    ] as const) {
      const error = await openDatabase({ url, logger }).catch((caught: Error) => caught);
      expect(error).toMatchObject({
        code: 'config_invalid',
        message: expect.stringContaining(`${part} has a malformed`),
      });
      expect((error as Error).message).not.toContain('se%zzcret');
    }
  });

  it('names the database and why nothing answers when no server listens there', async () => {
    const error = await openDatabase({ url: 'postgres://molf:s3cret@127.0.0.1:1/molf', logger }).catch(
      (caught: Error) => caught,
    );
    expect(error).toMatchObject({
      code: 'config_invalid',
      message:
        'cannot connect to the database molf@127.0.0.1:1/molf: nothing accepts connections at that host and port',
    });
  });
});

describe.skipIf(unavailable !== undefined)(
  `opening a PostgreSQL database${unavailable === undefined ? '' : ` (skipped: ${unavailable})`}`,
  () => {
    it('refuses a wrong password with the user and database named, and not the password', async () => {
      await using created = await createTestDatabase();
      const url = new URL(created.url);
      url.password = 'wrong-password';
      const error = await openDatabase({ url: url.toString(), logger }).catch((caught: Error) => caught);
      expect(error).toMatchObject({
        code: 'config_invalid',
        message: `cannot connect to the database molf@127.0.0.1:${url.port}/${created.name}: the password was refused`,
      });
      expect((error as Error).message).not.toContain('wrong-password');
    });

    it('says so when the database does not exist', async () => {
      await using created = await createTestDatabase();
      const url = new URL(created.url);
      url.pathname = '/no_such_database';
      await expect(openDatabase({ url: url.toString(), logger })).rejects.toMatchObject({
        message: expect.stringContaining('no_such_database: that database does not exist'),
      });
    });

    it('creates the schema in an empty database, and leaves it alone at the next start', async () => {
      await using created = await createTestDatabase();
      const first = await openDatabase({ url: created.url, logger });
      expect(first.schema).toMatchObject({ from: 0, to: MIGRATIONS.at(-1)?.version });
      await first.close();
      const second = await openDatabase({ url: created.url, logger });
      expect(second.schema.applied).toEqual([]);
      await second.close();
    });

    it('refuses a schema newer than its own with both versions named', async () => {
      await using created = await createTestDatabase();
      const newer: Migration[] = [...MIGRATIONS, { version: 99, name: 'from the future', sql: 'select 1' }];
      await (await openDatabase({ url: created.url, logger, migrations: newer })).close();
      const latest = MIGRATIONS.at(-1)?.version;
      await expect(openDatabase({ url: created.url, logger })).rejects.toMatchObject({
        code: 'config_invalid',
        message: expect.stringContaining(`schema is at version 99, newer than this server's ${latest}`),
      });
    });

    it('refuses an older schema with both versions named, and brings it up to date when told to', async () => {
      await using created = await createTestDatabase();
      await (await openDatabase({ url: created.url, logger })).close();
      const next: Migration[] = [
        ...MIGRATIONS,
        { version: 1_000, name: 'a later step', sql: 'create table later (x int)' },
      ];
      await expect(openDatabase({ url: created.url, logger, migrations: next })).rejects.toMatchObject({
        code: 'config_invalid',
        message: expect.stringMatching(/schema is at version \d+, older than this server's 1000: .*molf migrate/),
      });
      const migrated = await openDatabase({ url: created.url, logger, migrations: next, schema: 'migrate' });
      expect(migrated.schema.applied.map((step) => step.version)).toEqual([1_000]);
      await migrated.sql`select x from later`;
      await migrated.close();
    });

    it('applies each step once when several instances start on an empty database at the same moment', async () => {
      await using created = await createTestDatabase();
      const databases = await Promise.all(
        Array.from({ length: 4 }, () => openDatabase({ url: created.url, logger, maxConnections: 2 })),
      );
      const applied = databases.flatMap((database) => database.schema.applied.map((step) => step.version));
      expect(applied.sort()).toEqual(MIGRATIONS.map((step) => step.version).sort());
      const first = databases[0] as (typeof databases)[number];
      const rows = await first.sql`select version from molf_schema order by version`;
      expect(rows.map((row) => row.version)).toEqual(MIGRATIONS.map((step) => step.version));
      await Promise.all(databases.map((database) => database.close()));
    });

    it('fails a call with database_unavailable while the database is down, loses nothing stored, and works again once it is back', async () => {
      await using cluster = await startPostgresCluster();
      const url = await cluster.createDatabase('molf');
      const database = await openDatabase({ url, logger });
      const store = createPostgresSessionStore({ database });
      const session = await store.create({ workerId: 'w1' as WorkerId });
      await store.append(session.sessionId, { id: 'kept', at: new Date().toISOString(), role: 'user', text: 'kept' });
      await cluster.stop();
      await expect(
        store.append(session.sessionId, { id: 'lost', at: new Date().toISOString(), role: 'user', text: 'x' }),
      ).rejects.toMatchObject({ code: 'database_unavailable', message: expect.stringContaining('cannot be reached') });
      await expect(store.list({ limit: 10, offset: 0 })).rejects.toMatchObject({ code: 'database_unavailable' });
      await cluster.start();
      expect((await store.messages(session.sessionId)).map((message) => message.id)).toEqual(['kept']);
      await database.close();
    });
  },
);

import { createSilentLogger } from '@molf/logging';
import { createScratchDatabase } from '@molf/testkit';
import { inject } from 'vitest';
import { type Database, openDatabase } from '../database/index.ts';

/** Set to `postgres`, the agent stack of the tests keeps sessions and events in a database of its own. */
export const TEST_STORE_ENV = 'MOLF_TEST_STORE';

/** Why the run has no PostgreSQL, or undefined when it has one (see scripts/vitest-postgres.ts). */
export function postgresUnavailable(): string | undefined {
  const provided = inject('postgres');
  return 'unavailable' in provided ? provided.unavailable : undefined;
}

/** The run's cluster's superuser URL on its `postgres` database. */
export function postgresClusterUrl(): string {
  const provided = inject('postgres');
  if ('unavailable' in provided) throw new Error(provided.unavailable);
  return provided.url;
}

/** A new, empty database in the run's cluster, dropped (with its connections) on dispose. */
export function createTestDatabase(): Promise<AsyncDisposable & { url: string; name: string }> {
  return createScratchDatabase(postgresClusterUrl());
}

/** A new database with Molf's schema, opened; closed and dropped on dispose. */
export async function openTestDatabase(): Promise<AsyncDisposable & { database: Database; url: string }> {
  const created = await createTestDatabase();
  const database = await openDatabase({ url: created.url, logger: createSilentLogger() });
  return {
    database,
    url: created.url,
    async [Symbol.asyncDispose]() {
      await database.close();
      await created[Symbol.asyncDispose]();
    },
  };
}

/** Opens the database at `url` for one task (SQL a test sets up or looks at), and closes it after. */
export async function withDatabase<T>(url: string, task: (database: Database) => Promise<T>): Promise<T> {
  const database = await openDatabase({ url, logger: createSilentLogger() });
  try {
    return await task(database);
  } finally {
    await database.close();
  }
}

import type { Logger } from '@molf/logging';
import { MolfError } from '@molf/protocol';
import postgres from 'postgres';
import { describeDatabaseUrl } from './database-url.ts';
import { describeDatabaseError } from './describe-database-error.ts';
import { migrateSchema, type SchemaPolicy, type SchemaState } from './migrate-schema.ts';
import type { Migration } from './schema-migrations.ts';

export type DatabaseOptions = {
  /** `postgres://user:password@host:port/database`. */
  url: string;
  logger: Logger;
  /** What to do with a schema older than this server's. Default `create` (refuse it). */
  schema?: SchemaPolicy;
  /** Connections in the pool. Default 10. */
  maxConnections?: number;
  /** Shown in `pg_stat_activity`. Default `molf-server`. */
  applicationName?: string;
  /** Tests: another list of schema steps. */
  migrations?: readonly Migration[];
};

/** A connection pool to Molf's PostgreSQL database, its schema checked. */
export type Database = {
  sql: postgres.Sql;
  /** `user@host:port/database`: the URL without its password. */
  name: string;
  /** What the start did to the schema. */
  schema: SchemaState;
  /** The pool's size. */
  maxConnections: number;
  /** Ends every connection (waiting up to 5 s for queries in flight). Idempotent. */
  close(): Promise<void>;
};

/** Seconds a connection attempt may take before it counts as failed. */
const CONNECT_TIMEOUT_S = 10;

/**
 * Connects to the database and brings its schema to this server's version (see `migrateSchema`).
 * A wrong URL, a refused password, an unreachable host or a schema of another version fails here
 * with a `config_invalid` error that names the database (never its password) and the reason.
 */
export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  const name = describeDatabaseUrl(options.url);
  const sql = postgres(options.url, {
    max: options.maxConnections ?? 10,
    connect_timeout: CONNECT_TIMEOUT_S,
    idle_timeout: 60,
    onnotice: () => {},
    connection: { application_name: options.applicationName ?? 'molf-server' },
  });
  let closed: Promise<void> | undefined;
  const close = () => {
    closed ??= sql.end({ timeout: 5 });
    return closed;
  };
  try {
    await sql`select 1`;
  } catch (error) {
    await close();
    throw new MolfError('config_invalid', `cannot connect to the database ${name}: ${describeDatabaseError(error)}`, {
      cause: error,
    });
  }
  let schema: SchemaState;
  try {
    schema = await migrateSchema(sql, {
      policy: options.schema ?? 'create',
      logger: options.logger,
      ...(options.migrations === undefined ? {} : { migrations: options.migrations }),
    });
  } catch (error) {
    await close();
    if (error instanceof MolfError) throw error;
    throw new MolfError('config_invalid', `cannot prepare the database ${name}: ${describeDatabaseError(error)}`, {
      cause: error,
    });
  }
  return { sql, name, schema, maxConnections: options.maxConnections ?? 10, close };
}

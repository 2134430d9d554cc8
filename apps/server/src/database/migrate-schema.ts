import type { Logger } from '@molf/logging';
import { MolfError } from '@molf/protocol';
import type postgres from 'postgres';
import { MIGRATIONS, type Migration } from './schema-migrations.ts';

/** The advisory lock every schema change and check holds: two instances starting at once take turns. */
const SCHEMA_LOCK = 0x6d6f6c66; // "molf"

export type SchemaPolicy =
  /** Create the schema in an empty database; refuse one at an older version, naming both. */
  | 'create'
  /** Also bring an older schema up to date (`molf migrate`, `molf server --migrate`). */
  | 'migrate';

export type SchemaState = { from: number; to: number; applied: Migration[] };

/**
 * Brings the database's schema to this server's version, or refuses: a newer schema always (this
 * server would not understand it), an older one unless `policy` is `migrate`. Runs in one
 * transaction under an advisory lock, so two instances starting at once never both apply a step,
 * and a step that fails leaves the schema as it was.
 */
export async function migrateSchema(
  sql: postgres.Sql,
  options: { policy: SchemaPolicy; logger: Logger; migrations?: readonly Migration[] },
): Promise<SchemaState> {
  const migrations = options.migrations ?? MIGRATIONS;
  const latest = migrations.at(-1)?.version ?? 0;
  return sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(${SCHEMA_LOCK})`;
    await tx`
      create table if not exists molf_schema (
        version integer primary key,
        name text not null,
        applied_at timestamptz not null default now()
      )`;
    const [row] = await tx<{ version: number | null }[]>`select max(version) as version from molf_schema`;
    const current = row?.version ?? 0;
    if (current > latest) {
      throw new MolfError(
        'config_invalid',
        `the database's schema is at version ${current}, newer than this server's ${latest}: ` +
          'upgrade molf on this machine to the version the other servers run',
      );
    }
    const pending = migrations.filter((migration) => migration.version > current);
    if (pending.length > 0 && current > 0 && options.policy !== 'migrate') {
      throw new MolfError(
        'config_invalid',
        `the database's schema is at version ${current}, older than this server's ${latest}: ` +
          'back the database up, then run `molf migrate --database URL` (or start with --migrate)',
      );
    }
    for (const migration of pending) {
      await tx.unsafe(migration.sql);
      await tx`insert into molf_schema (version, name) values (${migration.version}, ${migration.name})`;
      options.logger.info({ version: migration.version, name: migration.name }, 'database schema step applied');
    }
    return { from: current, to: latest, applied: pending };
  });
}

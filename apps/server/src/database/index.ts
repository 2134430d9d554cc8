export { DATABASE_URL_ENV, describeDatabaseUrl } from './database-url.ts';
export { describeDatabaseError, failsAsUnavailable, isConnectionError } from './describe-database-error.ts';
export { migrateSchema, type SchemaPolicy, type SchemaState } from './migrate-schema.ts';
export { type Database, type DatabaseOptions, openDatabase } from './open-database.ts';
export { MIGRATIONS, type Migration } from './schema-migrations.ts';
export { type DatabaseHealth, type DatabaseHealthWatch, watchDatabaseHealth } from './watch-database-health.ts';

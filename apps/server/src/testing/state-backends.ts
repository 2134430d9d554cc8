import { createSilentLogger } from '@molf/logging';
import { type Database, openDatabase } from '../database/index.ts';
import { openFileStateDocuments, openPostgresStateDocuments, type StateDocuments } from '../state/index.ts';
import { createTestDatabase, postgresUnavailable } from './test-database.ts';
import { createTempDir } from './test-link.ts';

/** What one opener holds: the documents, and the database under them on PostgreSQL. */
export type OpenedState = { documents: StateDocuments; database: Database | undefined };

/**
 * Where a server keeps its state, shared by every opener: one data directory (a restarted server,
 * or another process on it), or one database (a restarted server, or another instance).
 */
export type StatePlace = AsyncDisposable & {
  /** Opens the state once more: another process's view of the data dir, or another instance. */
  open(): Promise<OpenedState>;
  /** The data directory of the file backend, for what only files have (modes, editors); undefined on PostgreSQL. */
  dataDir: string | undefined;
};

export type StateBackend = {
  name: 'files' | 'PostgreSQL';
  /** Why this run cannot test the backend, or undefined. */
  unavailable: string | undefined;
  /** A new, empty place; disposing it closes every opener and removes the place. */
  prepare(): Promise<StatePlace>;
};

const logger = createSilentLogger();

/** Both backends, for suites that state one behaviour for each. */
export function stateBackends(): StateBackend[] {
  return [
    {
      name: 'files',
      unavailable: undefined,
      async prepare() {
        const dir = await createTempDir();
        const opened: StateDocuments[] = [];
        return {
          dataDir: dir.path,
          async open() {
            const documents = openFileStateDocuments({ dataDir: dir.path, logger });
            opened.push(documents);
            return { documents, database: undefined };
          },
          async [Symbol.asyncDispose]() {
            try {
              for (const documents of opened) await documents.close();
            } finally {
              await dir[Symbol.asyncDispose]();
            }
          },
        };
      },
    },
    {
      name: 'PostgreSQL',
      unavailable: postgresUnavailable(),
      async prepare() {
        const created = await createTestDatabase();
        const opened: Array<{ database: Database; documents?: StateDocuments }> = [];
        return {
          dataDir: undefined,
          async open() {
            const database = await openDatabase({ url: created.url, logger, maxConnections: 4 });
            const entry: { database: Database; documents?: StateDocuments } = { database };
            opened.push(entry);
            const documents = await openPostgresStateDocuments({ database, logger });
            entry.documents = documents;
            return { documents, database };
          },
          async [Symbol.asyncDispose]() {
            try {
              for (const { database, documents } of opened) {
                try {
                  await documents?.close();
                } finally {
                  await database.close();
                }
              }
            } finally {
              await created[Symbol.asyncDispose]();
            }
          },
        };
      },
    },
  ];
}

/** A suite title naming the backend, and why it is skipped when it is. */
export function backendTitle(subject: string, backend: StateBackend): string {
  return `${subject}: ${backend.name}${backend.unavailable === undefined ? '' : ` (skipped: ${backend.unavailable})`}`;
}

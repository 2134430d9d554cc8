import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createSilentLogger } from '@molf/logging';
import { type Database, openDatabase } from '../database/index.ts';
import { describeSessionStoreContract, type SeededSession } from '../testing/session-store-contract.ts';
import { createTestDatabase, postgresUnavailable } from '../testing/test-database.ts';
import { createTempDir } from '../testing/test-link.ts';
import { openFileSessionStore } from './file-session-store.ts';
import { createPostgresSessionStore } from './postgres-session-store.ts';

const logger = createSilentLogger();

describeSessionStoreContract({
  name: 'files',
  async prepare() {
    const dir = await createTempDir();
    return {
      open: () => openFileSessionStore({ dataDir: dir.path, logger }),
      async seed(sessions: readonly SeededSession[]) {
        await Promise.all(
          sessions.map(async ({ parent, ...session }) => {
            const path = join(dir.path, 'sessions', session.sessionId);
            await mkdir(path, { recursive: true });
            const meta = { ...session, ...(parent === undefined ? {} : { parent }), messageCount: 0 };
            await writeFile(join(path, 'meta.json'), JSON.stringify(meta));
          }),
        );
      },
      [Symbol.asyncDispose]: () => dir[Symbol.asyncDispose](),
    };
  },
});

describeSessionStoreContract({
  name: 'PostgreSQL',
  unavailable: postgresUnavailable,
  async prepare() {
    const created = await createTestDatabase();
    const databases: Database[] = [];
    const open = async () => {
      // Each open is a new pool: a restarted server, or another instance.
      const database = await openDatabase({ url: created.url, logger, maxConnections: 4 });
      databases.push(database);
      return database;
    };
    const seeding = await open();
    return {
      open: async () => createPostgresSessionStore({ database: await open() }),
      async seed(sessions: readonly SeededSession[]) {
        const rows = sessions.map((session) => ({
          session_id: session.sessionId,
          worker_id: session.workerId,
          name: session.name,
          parent_session_id: session.parent?.sessionId ?? null,
          parent_tool_call_id: session.parent?.toolCallId ?? null,
          parent_agent: session.parent?.agent ?? null,
          created_at: new Date(session.createdAt),
          updated_at: new Date(session.updatedAt),
        }));
        for (let start = 0; start < rows.length; start += 1_000) {
          await seeding.sql`insert into sessions ${seeding.sql(rows.slice(start, start + 1_000))}`;
        }
      },
      async [Symbol.asyncDispose]() {
        await Promise.all(databases.map((database) => database.close()));
        await created[Symbol.asyncDispose]();
      },
    };
  },
});

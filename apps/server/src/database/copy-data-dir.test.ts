import { mkdir, readdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createSilentLogger } from '@molf/logging';
import type { SessionMessage, WorkerId } from '@molf/protocol';
import { describe, expect, it } from 'vitest';
import { openPostgresAuditLog } from '../approvals/postgres-audit-log.ts';
import { openFileSessionStore } from '../sessions/file-session-store.ts';
import { createPostgresSessionStore } from '../sessions/postgres-session-store.ts';
import { openPostgresStateDocuments } from '../state/postgres-state-documents.ts';
import { openTestDatabase, postgresUnavailable } from '../testing/test-database.ts';
import { createTempDir } from '../testing/test-link.ts';
import { checkCopy, copyDataDir } from './copy-data-dir.ts';

const logger = createSilentLogger();
const unavailable = postgresUnavailable();
const worker = 'w1' as WorkerId;

const answer = (id: string, costUsd: number): SessionMessage => ({
  id,
  at: new Date().toISOString(),
  role: 'assistant',
  text: `answer ${id}`,
  toolCalls: [],
  model: 'fake/m',
  usage: { inputTokens: 100, outputTokens: 10, costUsd },
});

describe.skipIf(unavailable !== undefined)(
  `copying a data dir into PostgreSQL${unavailable === undefined ? '' : ` (skipped: ${unavailable})`}`,
  () => {
    it('refuses a directory that is not a data dir, and creates nothing there', async () => {
      await using dir = await createTempDir();
      await using opened = await openTestDatabase();
      const missing = join(dir.path, 'typo');
      await expect(copyDataDir({ dataDir: missing, database: opened.database, logger })).rejects.toThrow(
        /does not exist/,
      );
      await expect(stat(missing)).rejects.toThrow();
      await writeFile(join(dir.path, 'notes.txt'), 'not molf\n');
      await expect(copyDataDir({ dataDir: dir.path, database: opened.database, logger })).rejects.toThrow(
        /not a Molf data directory/,
      );
      expect(await readdir(dir.path)).toEqual(['notes.txt']);
    });

    it('names the documents the database already has with other content, and fails the check, leaving both as they were', async () => {
      await using dir = await createTempDir();
      await writeFile(join(dir.path, 'credentials.json'), '{"version":2,"credentials":["the data dir\'s"]}\n');
      await mkdir(join(dir.path, 'workers', 'w1'), { recursive: true });
      await writeFile(join(dir.path, 'workers', 'w1', 'permissions.jsonc'), '{ "rules": [] }\n');
      await using opened = await openTestDatabase();
      const documents = await openPostgresStateDocuments({ database: opened.database, logger });
      await documents.write('credentials.json', '{"version":2,"credentials":["the cluster\'s"]}\n');
      await documents.write('workers/w1/permissions.jsonc', '{ "rules": [] }\n');
      const report = await copyDataDir({ dataDir: dir.path, database: opened.database, logger });
      // The same permissions file is no conflict; other credentials are.
      expect(report.documents).toMatchObject({ source: 2, copied: 0, conflicts: ['credentials.json'] });
      expect(() => checkCopy(report)).toThrow(/has its own credentials\.json/);
      expect(await documents.read('credentials.json')).toContain("the cluster's");
      await documents.close();
    });

    it('copies again after the data dir went on: the new messages land, the count and usage follow, and the next message is stored after them', async () => {
      await using dir = await createTempDir();
      const files = await openFileSessionStore({ dataDir: dir.path, logger });
      const session = await files.create({ workerId: worker, name: 'grows' });
      await files.append(session.sessionId, answer('a1', 0.25));
      await files.append(session.sessionId, answer('a2', 0.25));
      await files.close();
      await using opened = await openTestDatabase();
      checkCopy(await copyDataDir({ dataDir: dir.path, database: opened.database, logger }));
      // The data dir's server ran on (the copy was a trial run), then the copy is made again.
      const reopened = await openFileSessionStore({ dataDir: dir.path, logger });
      await reopened.append(session.sessionId, answer('a3', 0.5));
      await reopened.append(session.sessionId, answer('a4', 0.5));
      await reopened.close();
      const again = await copyDataDir({ dataDir: dir.path, database: opened.database, logger });
      checkCopy(again);
      expect(again).toMatchObject({ sessions: { copied: 0, inDatabase: 1 }, messages: { copied: 2, inDatabase: 4 } });
      const store = createPostgresSessionStore({ database: opened.database });
      expect(await store.get(session.sessionId)).toMatchObject({ messageCount: 4, usage: { costUsd: 1.5 } });
      await store.append(session.sessionId, answer('a5', 0.5));
      expect((await store.messages(session.sessionId)).map((message) => message.id)).toEqual([
        'a1',
        'a2',
        'a3',
        'a4',
        'a5',
      ]);
    });

    it('keeps every session, message, attachment and document with its ids, and copies nothing twice', async () => {
      await using dir = await createTempDir();
      const files = await openFileSessionStore({ dataDir: dir.path, logger });
      const parent = await files.create({ workerId: worker, name: 'the parent' });
      const child = await files.create({
        workerId: worker,
        parent: { sessionId: parent.sessionId, toolCallId: 'call_task', agent: 'explore' },
      });
      await files.append(parent.sessionId, { id: 'u1', at: new Date().toISOString(), role: 'user', text: 'hi 🦊' });
      await files.append(parent.sessionId, answer('a1', 0.25));
      await files.append(child.sessionId, answer('c1', 0.5));
      const sha = await files.putAttachment(parent.sessionId, new Uint8Array([1, 2, 3]));
      const before = await files.list({ limit: 10, offset: 0 });
      const history = await files.messages(parent.sessionId);
      await files.close();
      await writeFile(join(dir.path, 'credentials.json'), '{"version":2,"credentials":[]}\n');
      await mkdir(join(dir.path, 'workers', 'w1'), { recursive: true });
      await writeFile(join(dir.path, 'workers', 'w1', 'permissions.jsonc'), '// mine\n{ "rules": [] }\n');
      await mkdir(join(dir.path, 'secrets'), { recursive: true });
      await writeFile(join(dir.path, 'secrets', 'link-key'), Buffer.alloc(32, 7));
      // What a person allowed for the session ("allow for this session", "accept edits").
      const grants = '{"rules":[{"tool":"shell_exec","pattern":"npm test"}],"acceptEdits":true}\n';
      await mkdir(join(dir.path, 'session-grants'), { recursive: true });
      await writeFile(join(dir.path, 'session-grants', `${parent.sessionId}.json`), grants);
      // The audit trail, with a line torn by a crash, which is not a record.
      const decided = (command: string, decision: string) =>
        JSON.stringify({
          time: new Date().toISOString(),
          workerId: 'w1',
          tool: 'shell_exec',
          subjects: [command],
          decision,
          by: 'rule',
        });
      await mkdir(join(dir.path, 'audit'), { recursive: true });
      await writeFile(
        join(dir.path, 'audit', 'approvals.jsonl'),
        `${decided('ls', 'allowed')}\n${decided('rm -rf /', 'denied')}\n{"time":"2026-`,
      );
      await mkdir(join(dir.path, 'logs'), { recursive: true });
      await writeFile(join(dir.path, 'logs', 'server.log'), 'not state\n');

      await using opened = await openTestDatabase();
      const first = await copyDataDir({ dataDir: dir.path, database: opened.database, logger });
      checkCopy(first);
      expect(first).toMatchObject({
        sessions: { source: 2, copied: 2, inDatabase: 2 },
        messages: { source: 3, copied: 3, inDatabase: 3 },
        attachments: { source: 1, copied: 1, inDatabase: 1 },
        documents: { source: 4, copied: 4, inDatabase: 4 },
        auditRecords: { source: 2, copied: 2, inDatabase: 2 },
      });
      const audit = openPostgresAuditLog({ database: opened.database, logger });
      expect((await audit.read()).map((entry) => [entry.subjects, entry.decision])).toEqual([
        [['ls'], 'allowed'],
        [['rm -rf /'], 'denied'],
      ]);
      await audit.close();
      expect(first.documents.names).toEqual([
        'credentials.json',
        'secrets/link-key',
        `session-grants/${parent.sessionId}.json`,
        'workers/w1/permissions.jsonc',
      ]);

      const store = createPostgresSessionStore({ database: opened.database });
      const after = await store.list({ limit: 10, offset: 0 });
      // Sessions of one time may list in either order: compared by id.
      const pick = (list: typeof before) =>
        [...list.sessions]
          .sort((a, b) => (a.sessionId < b.sessionId ? -1 : 1))
          .map(({ sessionId, name, workerId, parent: of, createdAt, usage, messageCount }) => ({
            sessionId,
            name,
            workerId,
            of,
            createdAt,
            usage,
            messageCount,
          }));
      expect(pick(after)).toEqual(pick(before));
      expect(await store.messages(parent.sessionId)).toEqual(history);
      expect([...((await store.readAttachment(parent.sessionId, sha)) ?? [])]).toEqual([1, 2, 3]);
      const documents = await openPostgresStateDocuments({ database: opened.database, logger });
      expect(await documents.read('workers/w1/permissions.jsonc')).toBe('// mine\n{ "rules": [] }\n');
      expect((await documents.readBytes('secrets/link-key'))?.equals(Buffer.alloc(32, 7))).toBe(true);
      expect(await documents.read(`session-grants/${parent.sessionId}.json`)).toBe(grants);
      await documents.close();

      const again = await copyDataDir({ dataDir: dir.path, database: opened.database, logger });
      expect(again).toMatchObject({
        sessions: { source: 2, copied: 0, inDatabase: 2 },
        messages: { source: 3, copied: 0, inDatabase: 3 },
        attachments: { copied: 0, inDatabase: 1 },
        documents: { copied: 0, inDatabase: 4 },
        auditRecords: { source: 2, copied: 0, inDatabase: 2 },
      });
    });
  },
);

import { createSilentLogger } from '@molf/logging';
import type { WorkerId } from '@molf/protocol';
import { openFileSessionStore } from '@molf/server';
import { createScratchDatabase } from '@molf/testkit';
import { describe, expect, inject, it } from 'vitest';
import { spawnListeningServer, spawnMolf, useTestScope } from '../testing/cli-test-kit.ts';

const scope = useTestScope('migrate');
const postgres = inject('postgres');
const unavailable = 'unavailable' in postgres ? postgres.unavailable : undefined;
const env = { MOLF_LOG_FILE: 'none' };

describe.skipIf(unavailable !== undefined)(
  `molf migrate${unavailable === undefined ? '' : ` (skipped: ${unavailable})`}`,
  () => {
    it('copies a data dir into a database, verifies the counts, and copies nothing the second time', async () => {
      const dataDir = await scope.tempDir();
      const files = await openFileSessionStore({ dataDir, logger: createSilentLogger() });
      const session = await files.create({ workerId: 'w1' as WorkerId, name: 'kept across the move' });
      await files.append(session.sessionId, { id: 'm1', at: new Date().toISOString(), role: 'user', text: 'hello' });
      await files.close();
      await using database = await createScratchDatabase('url' in postgres ? postgres.url : '');

      const first = await spawnMolf(['migrate', '--from-files', dataDir, '--to', database.url], { env });
      expect(first.exitCode).toBe(0);
      expect(first.stdout).toMatch(/sessions\s+1 in the data dir,\s+1 copied now, 1 in the database/);
      expect(first.stdout).toMatch(/messages\s+1 in the data dir,\s+1 copied now, 1 in the database/);
      expect(first.stdout).toContain('verified');
      expect(first.stdout).not.toContain(new URL(database.url).password);
      const second = await spawnMolf(['migrate', '--from-files', dataDir, '--to', database.url], { env });
      expect(second.exitCode).toBe(0);
      expect(second.stdout).toMatch(/sessions\s+1 in the data dir,\s+0 copied now, 1 in the database/);

      const schema = await spawnMolf(['migrate', '--database', database.url], { env });
      expect(schema).toMatchObject({ exitCode: 0, stdout: expect.stringContaining('the schema is at version') });
    });

    it('refuses to copy a data dir while a server runs on it, and copies it once that server stopped', async () => {
      const dataDir = await scope.tempDir();
      const server = await spawnListeningServer(['--port', '0', '--data-dir', dataDir], { env });
      await using database = await createScratchDatabase('url' in postgres ? postgres.url : '');
      const refused = await spawnMolf(['migrate', '--from-files', dataDir, '--to', database.url], { env });
      expect(refused.exitCode).not.toBe(0);
      expect(refused.stderr).toContain(
        `the data directory ${dataDir} is in use by molf server (pid ${server.child.pid}, since `,
      );
      expect(refused.stdout).not.toContain('verified');
      // A second server on the same data dir is refused the same way.
      const second = await spawnMolf(['server', '--port', '0', '--data-dir', dataDir], { env });
      expect(second.exitCode).not.toBe(0);
      expect(second.stderr).toContain('or give this one another --data-dir');
      server.child.kill('SIGTERM');
      await server.child;
      const copied = await spawnMolf(['migrate', '--from-files', dataDir, '--to', database.url], { env });
      expect(copied).toMatchObject({ exitCode: 0, stdout: expect.stringContaining('verified') });
    });

    it('refuses a wrong password with the database named and exits non-zero; --from-files needs --to', async () => {
      await using database = await createScratchDatabase('url' in postgres ? postgres.url : '');
      const url = new URL(database.url);
      url.password = 'wrong-password';
      const refused = await spawnMolf(['migrate', '--database', url.toString()], { env });
      expect(refused.exitCode).not.toBe(0);
      expect(refused.stderr).toContain(
        `cannot connect to the database molf@127.0.0.1:${url.port}/${database.name}: the password was refused`,
      );
      expect(refused.stderr).not.toContain('wrong-password');
      const usage = await spawnMolf(['migrate', '--from-files', await scope.tempDir()], { env });
      expect(usage).toMatchObject({ exitCode: 2, stderr: expect.stringContaining('--from-files needs --to') });
    });
  },
);

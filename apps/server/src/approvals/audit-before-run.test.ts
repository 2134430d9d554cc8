import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { follow, newSession, startStack } from '../testing/agent-stack.ts';
import { createTestDatabase, postgresUnavailable, withDatabase } from '../testing/test-database.ts';

const unavailable = postgresUnavailable();

describe.skipIf(unavailable !== undefined)(
  `the audit record before the call${unavailable === undefined ? '' : ` (skipped: ${unavailable})`}`,
  () => {
    it('runs an allowed call only once its audit record is stored: a crash cannot leave a call without its record', async () => {
      await using created = await createTestDatabase();
      // The command itself looks for its record in the database.
      const command = `psql '${created.url}' -tAc "select count(*) from audit_log where record like '%seen.txt%'" > seen.txt`;
      await using stack = await startStack({
        databaseUrl: created.url,
        permissions: '{ "*": "ask", "shell_exec": "allow" }',
        turns: [{ toolCalls: [{ id: 'call_1', name: 'shell_exec', arguments: { command } }] }, { text: 'done' }],
      });
      // Storing a record takes a while: a call that did not wait for it would not find it.
      await withDatabase(created.url, (database) =>
        database.sql.unsafe(`
          create function slow_audit() returns trigger language plpgsql as
            $$ begin perform pg_sleep(2); return new; end $$;
          create trigger slow_audit before insert on audit_log for each row execute function slow_audit();`),
      );
      const session = await newSession(stack);
      using watch = follow(stack.client, session.sessionId);
      await stack.client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'run it' });
      await watch.turnEnded();
      expect(watch.events.find((event) => event.type === 'turn.ended')).toMatchObject({ reason: 'completed' });
      expect((await readFile(join(stack.link.workdir, 'seen.txt'), 'utf8')).trim()).toBe('1');
    });
  },
);

import { createSilentLogger } from '@molf/logging';
import { describe, expect, it } from 'vitest';
import { backendTitle, type StatePlace, stateBackends } from '../testing/state-backends.ts';
import { waitFor } from '../testing/test-link.ts';
import type { AuditLog, AuditRecord } from './audit-log.ts';
import { openFileAuditLog } from './file-audit-log.ts';
import { openPostgresAuditLog } from './postgres-audit-log.ts';

const logger = createSilentLogger();

/** The audit log as a server over the place opens it: the data dir's file, or the database's table. */
async function openLog(place: StatePlace): Promise<AuditLog> {
  if (place.dataDir !== undefined) return openFileAuditLog({ dataDir: place.dataDir, logger });
  const { database } = await place.open();
  if (database === undefined) throw new Error('a database place without a database');
  return openPostgresAuditLog({ database, logger });
}

const decision = (workerId: string, subject: string): AuditRecord => ({
  workerId,
  subjects: [subject],
  decision: 'allow',
  by: 'rule: "shell_exec": "allow"',
  tool: 'shell_exec',
});

const alwaysAnswer = (grantId: string): AuditRecord => ({
  workerId: 'w1',
  subjects: ['npm test'],
  decision: 'rules_changed',
  by: 'client:alice',
  client: 'molf-cli/0.1.0',
  sessionId: 's1',
  approvalId: 'ap_1',
  rules: ['npm test'],
  grants: [{ grantId, pattern: 'npm test' }],
});

for (const backend of stateBackends()) {
  const suite = backend.unavailable === undefined ? describe : describe.skip;
  suite(backendTitle('audit log', backend), () => {
    it("reads back what it kept, oldest first with its time: the newest ones when limited, one worker's when asked", async () => {
      await using place = await backend.prepare();
      const log = await openLog(place);
      try {
        const odd = 'nul \u0000, quote ", emoji 🦊, backslash \\';
        log.append(decision('w1', 'git status'));
        log.append(decision('w2', odd));
        log.append(decision('w1', 'x'.repeat(600)));
        const all = await log.read();
        expect(all.map((entry) => [entry.workerId, entry.subjects[0]?.slice(0, 10)])).toEqual([
          ['w1', 'git status'],
          ['w2', odd.slice(0, 10)],
          ['w1', 'x'.repeat(10)],
        ]);
        expect(all[1]?.subjects).toEqual([odd]);
        expect(all[2]?.subjects[0]).toBe(`${'x'.repeat(500)}…`);
        expect(Number.isNaN(Date.parse(all[0]?.time ?? ''))).toBe(false);
        expect(all[0]).toMatchObject({ decision: 'allow', tool: 'shell_exec', by: 'rule: "shell_exec": "allow"' });
        expect((await log.read({ workerId: 'w1' })).map((entry) => entry.subjects[0]?.slice(0, 3))).toEqual([
          'git',
          'xxx',
        ]);
        expect((await log.read({ limit: 1 })).map((entry) => entry.workerId)).toEqual(['w1']);
        expect(log.failure()).toBeUndefined();
      } finally {
        await log.close();
      }
    });

    it('finds how a grant was given, at once and after a restart, and nothing for an unknown grant', async () => {
      await using place = await backend.prepare();
      const first = await openLog(place);
      first.append(alwaysAnswer('g_1'));
      const expected = {
        grantId: 'g_1',
        by: 'client:alice',
        client: 'molf-cli/0.1.0',
        sessionId: 's1',
        approvalId: 'ap_1',
        subjects: ['npm test'],
        givenAt: expect.any(String),
      };
      expect(await first.grantOrigin('g_1')).toEqual(expected);
      await first.close();

      const restarted = await openLog(place);
      try {
        expect(await restarted.grantOrigin('g_1')).toEqual(expected);
        expect(await restarted.grantOrigin('g_unknown')).toBeUndefined();
      } finally {
        await restarted.close();
      }
    });
  });
}

const postgres = stateBackends().find((backend) => backend.name === 'PostgreSQL');
if (postgres !== undefined) {
  const suite = postgres.unavailable === undefined ? describe : describe.skip;
  suite(backendTitle('audit log across servers', postgres), () => {
    it('reads back the records of two servers from either, in time order', async () => {
      await using place = await postgres.prepare();
      const [one, two] = [await openLog(place), await openLog(place)];
      try {
        for (let index = 0; index < 6; index += 1) {
          (index % 2 === 0 ? one : two).append(decision('w1', `step ${index}`));
          // Apart in time, so that the order to expect is the order they were appended in.
          const before = Date.now();
          await waitFor(() => Date.now() > before, { what: 'the clock to move on' });
        }
        const steps = Array.from({ length: 6 }, (_, index) => `step ${index}`);
        await waitFor(async () => (await one.read()).length === 6 && (await two.read()).length === 6, {
          what: 'both servers to read all six records',
        });
        expect((await one.read()).map((entry) => entry.subjects[0])).toEqual(steps);
        expect((await two.read()).map((entry) => entry.subjects[0])).toEqual(steps);
        two.append(alwaysAnswer('g_from_two'));
        await waitFor(async () => (await one.grantOrigin('g_from_two')) !== undefined, {
          what: 'the grant given on the second server, as the first server finds it',
        });
      } finally {
        await one.close();
        await two.close();
      }
    });

    it('reports a failure while its records cannot be written (the gate then refuses calls), and writes them all once it can', async () => {
      await using place = await postgres.prepare();
      const { database } = await place.open();
      if (database === undefined) throw new Error('no database');
      const log = openPostgresAuditLog({ database, logger });
      try {
        await database.sql`alter table audit_log rename to audit_log_away`;
        log.append(decision('w1', 'while away'));
        await waitFor(() => log.failure() !== undefined, { what: 'the failure' });
        log.append(decision('w1', 'still away'));
        await database.sql`alter table audit_log_away rename to audit_log`;
        await waitFor(() => log.failure() === undefined, { what: 'the log written again' });
        expect((await log.read()).map((entry) => entry.subjects[0])).toEqual(['while away', 'still away']);
      } finally {
        await log.close();
      }
    });
  });
}

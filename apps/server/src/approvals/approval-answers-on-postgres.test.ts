import type { Approval, ApprovalEvent } from '@molf/protocol';
import type { FakeTurn } from '@molf/testkit';
import { createWorker } from '@molf/worker';
import { describe, expect, it } from 'vitest';
import { follow, newSession, type Stack, startStack, toolMessages } from '../testing/agent-stack.ts';
import { createTestDatabase, postgresUnavailable, withDatabase } from '../testing/test-database.ts';
import { TEST_WORKER_TOKEN, waitFor } from '../testing/test-link.ts';

const unavailable = postgresUnavailable();

/** A turn whose one step runs one shell command (which asks), then answers. */
const oneShellCall = (command: string): FakeTurn[] => [
  { toolCalls: [{ id: 'call_1', name: 'shell_exec', arguments: { command } }] },
  { text: 'done' },
];

/** Prompts the session and waits for the approval its shell call asks. */
async function promptUntilAsked(stack: Stack, sessionId: string, watch: ReturnType<typeof follow>): Promise<Approval> {
  await stack.client.rpc.sessions.prompt.mutate({ sessionId, text: 'go' });
  await waitFor(() => watch.types().includes('approval.requested'), { what: 'the approval' });
  const requested = watch.events.find((event) => event.type === 'approval.requested');
  if (requested?.type !== 'approval.requested') throw new Error('no approval');
  return requested.approval;
}

describe.skipIf(unavailable !== undefined)(
  `approvals answered through PostgreSQL${unavailable === undefined ? '' : ` (skipped: ${unavailable})`}`,
  () => {
    it('answers both calls when one approval is approved twice at once on one server (a double click): one applied, neither left hanging', async () => {
      await using created = await createTestDatabase();
      await using stack = await startStack({ databaseUrl: created.url, turns: oneShellCall('echo once') });
      const session = await newSession(stack);
      using watch = follow(stack.client, session.sessionId);
      const approval = await promptUntilAsked(stack, session.sessionId, watch);
      const answer = () =>
        stack.client.rpc.approvals.approve.mutate({
          sessionId: session.sessionId,
          approvalId: approval.approvalId,
        });
      // Both calls return (the winner's is not left to time out), and one answer applies.
      const answers = await Promise.all([answer(), answer()]);
      expect(answers.map((result) => result.applied).sort()).toEqual([false, true]);
      await watch.turnEnded();
      expect(watch.types().filter((type) => type === 'approval.resolved')).toHaveLength(1);
    });

    it('forgets the approvals of a server that died: not listed, and an answer is refused at once', async () => {
      await using created = await createTestDatabase();
      await using stack = await startStack({ databaseUrl: created.url, turns: oneShellCall('echo here') });
      const session = await newSession(stack);
      using watch = follow(stack.client, session.sessionId);
      await promptUntilAsked(stack, session.sessionId, watch);
      const [own] = await stack.client.rpc.approvals.list.query({ sessionId: session.sessionId });
      if (own === undefined) throw new Error('no approval listed');
      const feed: ApprovalEvent[] = [];
      const subscription = stack.client.rpc.approvals.events.subscribe({}, { onData: (event) => feed.push(event) });
      // Another server asked too, then was killed (nothing removed its row); a third was not seen for
      // a little longer than a lease (the database came back a moment ago: it renews any time now).
      const orphan = { ...own, approvalId: 'asked-by-a-dead-server' };
      const late = { ...own, approvalId: 'asked-by-a-late-server' };
      await withDatabase(created.url, async (database) => {
        await database.sql`
          insert into instances (instance_id, seen_at)
          values ('dead', now() - interval '1 hour'), ('late', now() - interval '30 seconds')`;
        for (const [approval, instance] of [
          [orphan, 'dead'],
          [late, 'late'],
        ] as const) {
          await database.sql`
            insert into pending_approvals (approval_id, session_id, worker_id, instance_id, approval)
            values (${approval.approvalId}, ${session.sessionId}, ${approval.workerId}, ${instance},
              ${JSON.stringify(approval)})`;
        }
      });
      expect(
        await stack.client.rpc.approvals.approve.mutate({
          sessionId: session.sessionId,
          approvalId: orphan.approvalId,
        }),
      ).toEqual({ applied: false });
      const listed = await stack.client.rpc.approvals.list.query({ sessionId: session.sessionId });
      expect(listed.map((approval) => approval.approvalId)).toEqual([own.approvalId]);
      await waitFor(
        () => feed.some((event) => event.type === 'approval.resolved' && event.approvalId === orphan.approvalId),
        { what: 'the orphan told as gone on the approvals feed' },
      );
      subscription.unsubscribe();
      // The late server's approval is not listed, but kept for when it is seen again.
      const kept = await withDatabase(
        created.url,
        (database) =>
          database.sql<{ approval_id: string }[]>`select approval_id from pending_approvals order by approval_id`,
      );
      expect(kept.map((row) => row.approval_id)).toEqual(['asked-by-a-late-server', own.approvalId].sort());
      await stack.client.rpc.approvals.approve.mutate({ sessionId: session.sessionId, approvalId: own.approvalId });
      await watch.turnEnded();
    });

    it('keeps the approval a call waits for while its worker reconnects, and runs the call once approved', async () => {
      await using created = await createTestDatabase();
      await using stack = await startStack({ databaseUrl: created.url, turns: oneShellCall('echo after-the-move') });
      const session = await newSession(stack);
      using watch = follow(stack.client, session.sessionId);
      const approval = await promptUntilAsked(stack, session.sessionId, watch);
      // The worker's link drops and it connects again, as when it moves to another server.
      await stack.link.worker.close();
      const again = await createWorker({
        serverUrl: stack.link.server.url,
        token: TEST_WORKER_TOKEN,
        workdir: stack.link.workdir,
      });
      try {
        await again.registered;
        expect(again.workerId).toBe(stack.link.worker.workerId);
        expect(
          await stack.client.rpc.approvals.approve.mutate({
            sessionId: session.sessionId,
            approvalId: approval.approvalId,
          }),
        ).toEqual({ applied: true });
        await watch.turnEnded();
        const [result] = await toolMessages(stack, session.sessionId, 'shell_exec');
        expect(result).toMatchObject({ output: expect.stringContaining('after-the-move') });
      } finally {
        await again.close();
      }
    });

    it('asks the people following this server about a cron run another server queued, instead of denying it', async () => {
      await using created = await createTestDatabase();
      await using stack = await startStack({ databaseUrl: created.url, turns: oneShellCall('echo watched-here') });
      const session = await newSession(stack);
      using watch = follow(stack.client, session.sessionId);
      const requested: Approval[] = [];
      const approvals = stack.client.rpc.approvals.events.subscribe(
        { sessionId: session.sessionId },
        { onData: (event) => event.type === 'approval.requested' && requested.push(event.approval) },
      );
      try {
        const target = { sessionId: session.sessionId, workerId: stack.link.worker.workerId };
        await waitFor(() => stack.link.server.approvalWatchers.watching(target), { what: 'the approvals followed' });
        // Queued as another server's cron run is: in the table, its policy without a watch, then a wake.
        await stack.link.server.sessions.enqueue(session.sessionId, {
          messageId: 'cron-run-1',
          text: 'run the check',
          cronJobId: 'cj_0123456789abcdef',
          unattended: { policy: 'deny', waitMs: 60_000, runBy: 'the cron job "check" (cj_0123456789abcdef)' },
          at: new Date().toISOString(),
        });
        await stack.link.server.leases?.wake(session.sessionId);
        // Denied, the turn would end without asking.
        await waitFor(() => requested.length === 1 || watch.types().includes('turn.ended'), {
          what: 'the run’s approval',
        });
        expect(requested).toHaveLength(1);
        await stack.client.rpc.approvals.approve.mutate({
          sessionId: session.sessionId,
          approvalId: requested[0]?.approvalId ?? '',
        });
        await watch.turnEnded();
        const [result] = await toolMessages(stack, session.sessionId, 'shell_exec');
        expect(result).toMatchObject({ output: expect.stringContaining('watched-here') });
      } finally {
        approvals.unsubscribe();
      }
    });
  },
);

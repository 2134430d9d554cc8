import { describe, expect, it } from 'vitest';
import { follow, newSession, startStack } from '../testing/agent-stack.ts';
import { createTestDatabase, postgresUnavailable } from '../testing/test-database.ts';
import { waitFor } from '../testing/test-link.ts';

const unavailable = postgresUnavailable();

describe.skipIf(unavailable !== undefined)(
  `approvals answered through PostgreSQL${unavailable === undefined ? '' : ` (skipped: ${unavailable})`}`,
  () => {
    it('answers both calls when one approval is approved twice at once on one server (a double click): one applied, neither left hanging', async () => {
      await using created = await createTestDatabase();
      await using stack = await startStack({
        databaseUrl: created.url,
        turns: [
          { toolCalls: [{ id: 'call_1', name: 'shell_exec', arguments: { command: 'echo once' } }] },
          { text: 'done' },
        ],
      });
      const session = await newSession(stack);
      using watch = follow(stack.client, session.sessionId);
      await stack.client.rpc.sessions.prompt.mutate({ sessionId: session.sessionId, text: 'go' });
      await waitFor(() => watch.types().includes('approval.requested'), { what: 'the approval' });
      const requested = watch.events.find((event) => event.type === 'approval.requested');
      if (requested?.type !== 'approval.requested') throw new Error('no approval');
      const answer = () =>
        stack.client.rpc.approvals.approve.mutate({
          sessionId: session.sessionId,
          approvalId: requested.approval.approvalId,
        });
      // Both calls return (the winner's is not left to time out), and one answer applies.
      const answers = await Promise.all([answer(), answer()]);
      expect(answers.map((result) => result.applied).sort()).toEqual([false, true]);
      await watch.turnEnded();
      expect(watch.types().filter((type) => type === 'approval.resolved')).toHaveLength(1);
    });
  },
);

import type { Approval, WorkerId } from '@molf/protocol';
import { describe, expect, it } from 'vitest';
import { MAX_WEBHOOK_ARG_CHARS, toWebhookRequest } from './to-webhook-request.ts';

const approval: Approval = {
  approvalId: 's1:abc',
  kind: 'tool_call',
  sessionId: 's1',
  workerId: '6f1c2f7e-0000-4000-8000-000000000001' as WorkerId,
  toolCallId: 'call_1',
  tool: 'write_file',
  args: { path: 'notes.md', content: 'y'.repeat(5_000) },
  reason: 'no rule matches',
  subjects: [{ kind: 'path', label: 'notes.md → /work/p/notes.md', decision: 'ask' }],
  alwaysPatterns: ['notes.md'],
  requestedAt: '2025-01-01T00:00:00.000Z',
};
const links = { approve: 'https://m/approval-links/a.b', deny: 'https://m/approval-links/c.d', expiresAt: 'soon' };

describe('toWebhookRequest', () => {
  it('posts the approval, worker, session and links as JSON, long arguments cut', () => {
    const request = toWebhookRequest(
      { approval, worker: { workerId: approval.workerId, name: 'p' }, session: undefined, links },
      { type: 'webhook', url: 'https://hooks.example/molf' },
    );
    expect(request.url).toBe('https://hooks.example/molf');
    const body = JSON.parse(request.body) as { approval: Approval } & Record<string, unknown>;
    expect(body).toMatchObject({
      type: 'approval.requested',
      approval: { approvalId: 's1:abc', tool: 'write_file', args: { path: 'notes.md' }, subjects: approval.subjects },
      worker: { workerId: approval.workerId, name: 'p' },
      session: null,
      links,
    });
    expect(String(body.approval.args.content)).toHaveLength(MAX_WEBHOOK_ARG_CHARS + '… (3000 more characters)'.length);
  });

  it('sends the configured headers, whose Content-Type cannot replace the JSON one', () => {
    const request = toWebhookRequest(
      { approval, worker: { workerId: approval.workerId, name: 'p' }, session: undefined, links },
      {
        type: 'webhook',
        url: 'https://hooks.example/molf',
        headers: { 'X-Secret': 's', 'Content-Type': 'text/plain' },
      },
    );
    expect(request.headers).toMatchObject({ 'x-secret': 's', 'content-type': 'application/json' });
    expect(Object.keys(request.headers).filter((name) => name.toLowerCase() === 'content-type')).toHaveLength(1);
  });
});

import type { Approval, WorkerId } from '@molf/protocol';
import { describe, expect, it } from 'vitest';
import type { ApprovalNotification } from './outgoing-request.ts';
import { toHeaderText, toNtfyRequest } from './to-ntfy-request.ts';

const approval: Approval = {
  approvalId: 's1:abc',
  kind: 'tool_call',
  sessionId: 's1',
  workerId: '6f1c2f7e-0000-4000-8000-000000000001' as WorkerId,
  toolCallId: 'call_1',
  tool: 'shell_exec',
  args: { command: 'ls && rm -rf build' },
  reason: 'the rule "shell_exec": { "rm *": "ask" } (permissions.jsonc line 9) asks',
  subjects: [
    { kind: 'command', label: 'ls', decision: 'allow', rule: '"shell_exec": { "ls *": "allow" } (the built-in rules)' },
    {
      kind: 'command',
      label: 'rm -rf build',
      decision: 'ask',
      rule: '"shell_exec": { "rm *": "ask" } (permissions.jsonc line 9)',
    },
  ],
  alwaysPatterns: ['rm -rf *'],
  requestedAt: '2025-01-01T00:00:00.000Z',
};

const notification: ApprovalNotification = {
  approval,
  worker: { workerId: approval.workerId, name: 'my-project' },
  session: { sessionId: 's1', name: 'fix the build' },
  links: {
    approve: 'https://molf.example/approval-links/aaa.bbb',
    deny: 'https://molf.example/approval-links/ccc.ddd',
    expiresAt: '2025-01-01T00:10:00.000Z',
  },
};

describe('toNtfyRequest', () => {
  it('posts the exact line to the topic with a title, priority, tags and two http action buttons', () => {
    const request = toNtfyRequest(notification, { type: 'ntfy', url: 'http://ntfy.lan/molf' });
    expect(request.url).toBe('http://ntfy.lan/molf');
    expect(request.headers).toMatchObject({
      title: 'Approve shell_exec on my-project?',
      priority: 'high',
      tags: 'robot,question',
      actions:
        'http, Approve, https://molf.example/approval-links/aaa.bbb, method=POST, clear=true; ' +
        'http, Deny, https://molf.example/approval-links/ccc.ddd, method=POST, clear=true',
    });
    expect(request.headers).not.toHaveProperty('authorization');
    expect(request.body.split('\n')).toEqual([
      '$ ls && rm -rf build',
      '',
      'asks: rm -rf build ("shell_exec": { "rm *": "ask" } (permissions.jsonc line 9))',
      'why: the rule "shell_exec": { "rm *": "ask" } (permissions.jsonc line 9) asks',
      'worker my-project · session "fix the build" (s1)',
      'links expire at 2025-01-01T00:10:00.000Z',
    ]);
  });

  it('sends the access token as a bearer token', () => {
    const request = toNtfyRequest(notification, { type: 'ntfy', url: 'http://ntfy.lan/molf', token: 'tk_abc' });
    expect(request.headers.authorization).toBe('Bearer tk_abc');
  });

  it('encodes a title that is not plain ASCII as an RFC 2047 word, which fetch accepts and ntfy decodes', () => {
    const request = toNtfyRequest(
      { ...notification, worker: { ...notification.worker, name: 'prüfung 🚀' } },
      { type: 'ntfy', url: 'http://ntfy.lan/molf' },
    );
    const title = request.headers.title ?? '';
    expect(title).toMatch(/^=\?UTF-8\?B\?[A-Za-z0-9+/=]+\?=$/);
    expect(Buffer.from(title.slice(10, -2), 'base64').toString('utf8')).toBe('Approve shell_exec on prüfung 🚀?');
    expect(() => new Headers(request.headers)).not.toThrow();
  });

  it('keeps header text on one line', () => {
    expect(toHeaderText('a\r\nb')).toBe('a b');
  });

  it('names the MCP server a start asks about, and no session', () => {
    const request = toNtfyRequest(
      {
        ...notification,
        session: undefined,
        approval: {
          ...approval,
          kind: 'mcp_server',
          sessionId: `worker:${approval.workerId}`,
          tool: 'mcp.server',
          args: { name: 'github', definition: { command: 'gh-mcp' } },
          subjects: [{ kind: 'name', label: 'github: gh-mcp', decision: 'ask' }],
          reason: 'no rule matches',
        },
      },
      { type: 'ntfy', url: 'http://ntfy.lan/molf' },
    );
    expect(request.headers.title).toBe('Approve start MCP server "github" on my-project?');
    expect(request.body.split('\n')).toEqual([
      'github: gh-mcp',
      '',
      'why: no rule matches',
      'worker my-project',
      'links expire at 2025-01-01T00:10:00.000Z',
    ]);
  });

  it('cuts a huge subject so the message stays within what ntfy keeps as text', () => {
    const request = toNtfyRequest(
      { ...notification, approval: { ...approval, args: { command: `echo ${'x'.repeat(10_000)}` } } },
      { type: 'ntfy', url: 'http://ntfy.lan/molf' },
    );
    expect(Buffer.byteLength(request.body)).toBeLessThan(4_096);
    expect(request.body).toContain('more characters)');
  });
});

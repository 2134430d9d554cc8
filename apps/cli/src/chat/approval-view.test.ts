import type { Approval, WorkerId } from '@molf/protocol';
import { describe, expect, it } from 'vitest';
import { createTerminalStyle } from '../terminal/terminal-style.ts';
import { approvalChoices, choiceFor, describeApproval, formatChoices } from './approval-view.ts';

const style = createTerminalStyle(0);

const shellCall: Approval = {
  approvalId: 'approval-1',
  sessionId: 'session-1',
  workerId: '4b0f3c1e-9d3a-4c55-8a8e-3f1d1c2b7a10' as WorkerId,
  toolCallId: 'call-1',
  tool: 'shell_exec',
  args: { command: 'echo one' },
  reason: 'no rule allows it',
  subjects: [{ kind: 'command', label: 'echo one', decision: 'ask' }],
  alwaysPatterns: ['echo *'],
  requestedAt: '2026-06-01T12:00:00.000Z',
};

const serverStart: Approval = {
  ...shellCall,
  approvalId: 'approval-2',
  kind: 'mcp_server',
  sessionId: `worker:${shellCall.workerId}`,
  tool: 'mcp.server',
  args: { name: 'files' },
  alwaysPatterns: null,
};

const keys = (approval: Approval, always?: boolean) =>
  approvalChoices(approval, always === undefined ? {} : { always }).map((choice) => choice.key);

describe('the approval view', () => {
  it('offers "always" by default, for a call and for a server start', () => {
    expect(keys(shellCall)).toEqual(['y', 's', 'a', 'n']);
    expect(keys(serverStart)).toEqual(['y', 'a', 'n']);
  });

  it('offers no "always" to a credential that may not save rules, keeping once, session and no', () => {
    expect(keys(shellCall, false)).toEqual(['y', 's', 'n']);
    expect(keys(serverStart, false)).toEqual(['y', 'n']);
    expect(formatChoices(shellCall, style, { always: false })).not.toContain('[a]');
  });

  it('takes "a" or "always" as no answer then', () => {
    expect(choiceFor(shellCall, 'a', { always: false })).toBeUndefined();
    expect(choiceFor(shellCall, 'always', { always: false })).toBeUndefined();
    expect(choiceFor(shellCall, 's', { always: false })?.scope).toBe('session');
    expect(choiceFor(shellCall, 'a')?.scope).toBe('always');
  });

  it('says that "always" needs an admin credential, and what "session" would allow', () => {
    const shown = describeApproval(shellCall, style, { always: false });
    expect(shown).toContain('session allow: "echo *"');
    expect(shown).not.toContain('session/always');
    expect(shown).toContain('"always" saves a rule for the worker: that needs an admin credential');
    expect(describeApproval(serverStart, style, { always: false })).toContain('needs an admin credential');
    expect(describeApproval(shellCall, style)).not.toContain('needs an admin');
  });
});

import { describe, expect, it } from 'vitest';
import { agentMayUse } from './agent-tools.ts';

describe("a subagent's tools", () => {
  it('never lets an agent use task, and only the tools of its allow-list when it has one', () => {
    expect(agentMayUse({ tools: undefined }, 'shell_exec')).toBe(true);
    expect(agentMayUse({ tools: undefined }, 'task')).toBe(false);
    expect(agentMayUse({ tools: ['grep'] }, 'grep')).toBe(true);
    expect(agentMayUse({ tools: ['grep'] }, 'read_file')).toBe(false);
  });
});

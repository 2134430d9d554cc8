import type { AgentInfo, ProjectCatalog } from '@molf/protocol';
import { describe, expect, it } from 'vitest';
import { resolveAgents } from './agent-profiles.ts';

const TOOLS = ['read_file', 'write_file', 'glob', 'grep', 'shell_exec', 'skill', 'task'];

function agent(name: string, fields: Partial<AgentInfo> = {}): AgentInfo {
  return {
    name,
    description: `${name} agent`,
    path: `.agents/agents/${name}.md`,
    source: '.agents',
    prompt: 'p',
    ...fields,
  };
}

function resolve(agents: AgentInfo[], checkModel = (_model: string): string | undefined => undefined) {
  const catalog: ProjectCatalog = { version: 1, skills: [], agents, problems: [] };
  return resolveAgents({ catalog, toolNames: TOOLS, checkModel });
}

describe('resolving the agents a worker offers', () => {
  it('offers the built-in explore and general agents, and lets a project agent of the same name replace one', () => {
    expect([...resolve([]).agents.keys()]).toEqual(['explore', 'general']);
    const replaced = resolve([agent('explore', { tools: ['read_file'] })]);
    expect(replaced.agents.get('explore')).toMatchObject({ builtin: false, tools: ['read_file'] });
    expect(replaced.agents.get('general')?.builtin).toBe(true);
  });

  it('reads a permission into agent-layer rules, and leaves out an agent whose permission is invalid', () => {
    const { agents, problems } = resolve([
      agent('ok', { permission: { read_file: { 'secret/*': 'deny' } } }),
      agent('broken', { permission: { read_file: 'sometimes' } }),
    ]);
    expect(agents.get('ok')?.rules).toMatchObject([
      { tool: 'read_file', pattern: 'secret/*', action: 'deny', source: { layer: 'agent', agent: 'ok' } },
    ]);
    expect(agents.has('broken')).toBe(false);
    expect(problems).toEqual([
      expect.objectContaining({
        path: '.agents/agents/broken.md',
        severity: 'error',
        message: expect.stringContaining('"broken" is not offered'),
      }),
    ]);
  });

  it('drops tools the worker does not have and the task tool from an allow-list, saying so', () => {
    const { agents, problems } = resolve([agent('picky', { tools: ['read_file', 'teleport', 'task'] })]);
    expect(agents.get('picky')?.tools).toEqual(['read_file']);
    expect(problems.map((problem) => problem.message)).toEqual([
      expect.stringContaining('teleport'),
      expect.stringContaining('no nesting'),
    ]);
  });

  it('reports a model the server cannot use, keeping the agent (its task then fails with the reason)', () => {
    const { agents, problems } = resolve([agent('far', { model: 'nowhere/x' })], (model) =>
      model.startsWith('nowhere/') ? 'no provider named nowhere' : undefined,
    );
    expect(agents.get('far')?.model).toBe('nowhere/x');
    expect(problems[0]?.message).toContain('no provider named nowhere');
  });
});

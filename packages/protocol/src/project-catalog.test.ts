import { describe, expect, it } from 'vitest';
import { ProjectCatalogSchema } from './project-catalog.ts';

const skill = (name: string) => ({
  name,
  description: 'd',
  path: `.agents/skills/${name}/SKILL.md`,
  source: '.agents',
});
const agent = (name: string) => ({
  name,
  description: 'd',
  path: `.agents/agents/${name}.md`,
  source: '.agents',
  prompt: 'p',
});

describe('a project catalog snapshot', () => {
  it('is accepted with unique skill and agent names', () => {
    const parsed = ProjectCatalogSchema.safeParse({
      version: 1,
      skills: [skill('a'), skill('b')],
      agents: [agent('a')],
      problems: [],
    });
    expect(parsed.success).toBe(true);
  });

  it('is refused when two skills or two agents share a name (the tools offer them as an enum)', () => {
    const skills = ProjectCatalogSchema.safeParse({
      version: 1,
      skills: [skill('a'), skill('a')],
      agents: [],
      problems: [],
    });
    expect(skills.error?.issues[0]?.message).toBe('two skills are named "a"');
    const agents = ProjectCatalogSchema.safeParse({
      version: 1,
      skills: [],
      agents: [agent('x'), agent('x')],
      problems: [],
    });
    expect(agents.error?.issues[0]?.message).toBe('two agents are named "x"');
  });
});

import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { createCatalogWorkdir } from './catalog-test-kit.ts';
import { scanProjectCatalog } from './scan-project-catalog.ts';

const README = new URL('../../../../README.md', import.meta.url);

/**
 * The ```markdown block that follows the line starting with `lead` in the README's
 * "## Skills and subagents" section, as a user would copy it.
 */
async function readmeExample(lead: string): Promise<string> {
  const readme = await readFile(README, 'utf8');
  const start = readme.indexOf('\n## Skills and subagents\n');
  if (start === -1) throw new Error('README.md has no "## Skills and subagents" section');
  const end = readme.indexOf('\n## ', start + 1);
  const section = readme.slice(start, end === -1 ? undefined : end);
  const leadAt = section.indexOf(`\n${lead}`);
  if (leadAt === -1) throw new Error(`the section has no line starting with ${JSON.stringify(lead)}`);
  const block = /\n```markdown\n([\s\S]*?)\n```\n/.exec(section.slice(leadAt));
  if (block?.[1] === undefined) throw new Error(`no \`\`\`markdown block after ${JSON.stringify(lead)}`);
  return `${block[1]}\n`;
}

describe("the README's worked examples", () => {
  it('are accepted as written: the skill deploy and the agent reviewer, with every field the README shows and no problem', async () => {
    await using workdir = await createCatalogWorkdir();
    await workdir.write('.agents/skills/deploy/SKILL.md', await readmeExample('**A skill**'));
    await workdir.write('.agents/agents/reviewer.md', await readmeExample('**An agent**'));
    const scan = await scanProjectCatalog(workdir.path);
    expect(scan.problems).toEqual([]);
    expect(scan.skills).toEqual([
      {
        name: 'deploy',
        description: 'How to deploy this project to staging and check it worked',
        path: '.agents/skills/deploy/SKILL.md',
        source: '.agents',
        allowedTools: ['shell_exec', 'read_file'],
        license: 'MIT',
      },
    ]);
    expect(scan.agents).toEqual([
      {
        name: 'reviewer',
        description: 'Reviews a change for bugs without touching the code',
        path: '.agents/agents/reviewer.md',
        source: '.agents',
        tools: ['read_file', 'grep', 'glob'],
        permission: { read_file: { 'secret/*': 'deny' } },
        model: 'anthropic/claude-sonnet-4',
        maxSteps: 8,
        prompt: expect.stringMatching(/^You review code\. /),
      },
    ]);
  });
});

import { mkdtemp, rm, symlink, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MAX_CATALOG_FILE_BYTES, MAX_SKILL_FILES } from '@molf/protocol';
import { describe, expect, it } from 'vitest';
import { answerWorkerRequest } from '../answer-worker-request.ts';
import { createReadTracker } from '../tools/read-tracker.ts';
import { createPathPolicy } from '../tools/resolve-tool-path.ts';
import { createCatalogWorkdir, markdown } from './catalog-test-kit.ts';
import { readSkill } from './read-skill.ts';
import { scanProjectCatalog } from './scan-project-catalog.ts';

async function catalogOf(workdir: string) {
  return { version: 1, ...(await scanProjectCatalog(workdir)) };
}

describe('readSkill', () => {
  it("answers with the SKILL.md's body after the frontmatter, trimmed, as the file is now", async () => {
    await using workdir = await createCatalogWorkdir();
    const path = await workdir.write('.agents/skills/deploy/SKILL.md', markdown('description: d', '\n# Deploy\n'));
    const catalog = await catalogOf(workdir.path);
    await writeFile(path, markdown('description: d', '\n# Deploy\n\nEdited since the snapshot.\n\n'));
    expect(await readSkill({ workdir: workdir.path, catalog, name: 'deploy' })).toEqual({
      name: 'deploy',
      path: '.agents/skills/deploy/SKILL.md',
      content: '# Deploy\n\nEdited since the snapshot.',
      truncated: false,
      files: [],
    });
  });

  it('lists the other files of the skill folder, recursively and sorted, without links leading out', async () => {
    await using workdir = await createCatalogWorkdir();
    const outside = await mkdtemp(join(tmpdir(), 'molf-outside-'));
    try {
      await writeFile(join(outside, 'secret.txt'), 'secret');
      await workdir.write('.claude/skills/pdf/SKILL.md', markdown('description: d', 'Use the scripts.'));
      await workdir.write('.claude/skills/pdf/scripts/fill.py', '');
      await workdir.write('.claude/skills/pdf/reference.md', '');
      await workdir.write('.claude/skills/pdf/scripts/lib/util.py', '');
      await workdir.write('docs/forms.md', '');
      await symlink(join(workdir.path, 'docs/forms.md'), join(workdir.path, '.claude/skills/pdf/forms.md'));
      await symlink(join(outside, 'secret.txt'), join(workdir.path, '.claude/skills/pdf/secret.txt'));
      const content = await readSkill({ workdir: workdir.path, catalog: await catalogOf(workdir.path), name: 'pdf' });
      expect(content.files).toEqual([
        '.claude/skills/pdf/forms.md',
        '.claude/skills/pdf/reference.md',
        '.claude/skills/pdf/scripts/fill.py',
        '.claude/skills/pdf/scripts/lib/util.py',
      ]);
      expect(content.moreFiles).toBeUndefined();
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });

  it('lists the files of the skill folder, not of where a linked SKILL.md leads', async () => {
    await using workdir = await createCatalogWorkdir();
    await workdir.write('docs/SKILL.md', markdown('description: d', 'Linked.'));
    await workdir.write('docs/unrelated.md', '');
    await workdir.write('.agents/skills/linked/helper.sh', '');
    await symlink(join(workdir.path, 'docs/SKILL.md'), join(workdir.path, '.agents/skills/linked/SKILL.md'));
    const content = await readSkill({ workdir: workdir.path, catalog: await catalogOf(workdir.path), name: 'linked' });
    expect(content).toMatchObject({ content: 'Linked.', files: ['.agents/skills/linked/helper.sh'] });
  });

  it(`lists at most ${MAX_SKILL_FILES} files and says there are more`, async () => {
    await using workdir = await createCatalogWorkdir();
    await workdir.write('.agents/skills/many/SKILL.md', markdown('description: d'));
    for (let index = 0; index < MAX_SKILL_FILES + 5; index += 1) {
      await workdir.write(`.agents/skills/many/data/f${String(index).padStart(3, '0')}.txt`, '');
    }
    const content = await readSkill({ workdir: workdir.path, catalog: await catalogOf(workdir.path), name: 'many' });
    expect(content.files).toHaveLength(MAX_SKILL_FILES);
    expect(content.files[0]).toBe('.agents/skills/many/data/f000.txt');
    expect(content.moreFiles).toBe(true);
  });

  it('answers with the content cut at the cap, and says so, for a SKILL.md larger than the cap', async () => {
    await using workdir = await createCatalogWorkdir();
    const body = 'y'.repeat(MAX_CATALOG_FILE_BYTES);
    const path = await workdir.write('.agents/skills/big/SKILL.md', markdown('description: d', body));
    await truncate(path, 10 * 1024 * 1024);
    const content = await readSkill({ workdir: workdir.path, catalog: await catalogOf(workdir.path), name: 'big' });
    expect(content.truncated).toBe(true);
    expect(content.content).toBe(body.slice(0, MAX_CATALOG_FILE_BYTES - markdown('description: d').length));
  });

  it('refuses an unknown name, naming the skills there are', async () => {
    await using workdir = await createCatalogWorkdir();
    await workdir.write('.agents/skills/deploy/SKILL.md', markdown('description: d'));
    await workdir.write('.claude/skills/lint/SKILL.md', markdown('description: d'));
    const catalog = await catalogOf(workdir.path);
    await expect(readSkill({ workdir: workdir.path, catalog, name: 'deplo' })).rejects.toThrow(
      'no skill named "deplo"; the available skills are: deploy, lint',
    );
  });
});

describe('the skills/read request', () => {
  it('is answered with the skill, or with an error naming the available skills', async () => {
    await using workdir = await createCatalogWorkdir();
    await workdir.write('.agents/skills/deploy/SKILL.md', markdown('description: d', 'Steps.'));
    const catalog = await catalogOf(workdir.path);
    const context = {
      paths: await createPathPolicy({ workdir: workdir.path }),
      reads: createReadTracker(),
      catalog: () => catalog,
    };
    expect(await answerWorkerRequest({ method: 'skills/read', params: { name: 'deploy' } }, context)).toEqual({
      method: 'skills/read',
      result: {
        name: 'deploy',
        path: '.agents/skills/deploy/SKILL.md',
        content: 'Steps.',
        truncated: false,
        files: [],
      },
    });
    expect(await answerWorkerRequest({ method: 'skills/read', params: { name: 'nope' } }, context)).toEqual({
      error: { message: 'skills/read failed: no skill named "nope"; the available skills are: deploy' },
    });
  });
});

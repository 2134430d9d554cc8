import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, open, rm, symlink, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MAX_AGENTS, MAX_CATALOG_FILE_BYTES } from '@molf/protocol';
import { describe, expect, it } from 'vitest';
import { createCatalogWorkdir, markdown } from './catalog-test-kit.ts';
import { scanProjectCatalog } from './scan-project-catalog.ts';

/** A folder outside the workdir, removed when the test ends. */
async function createOutsideDir(): Promise<AsyncDisposable & { path: string }> {
  const path = await mkdtemp(join(tmpdir(), 'molf-outside-'));
  return { path, [Symbol.asyncDispose]: () => rm(path, { recursive: true, force: true }) };
}

/** A file of `header` followed by zeros up to `size` bytes, without writing them (a sparse file). */
async function writeSparseFile(path: string, header: string, size: number): Promise<void> {
  const handle = await open(path, 'w');
  await handle.write(header);
  await handle.close();
  await truncate(path, size);
}

describe('skills', () => {
  it('reads every frontmatter field of a SKILL.md, and keeps unknown keys in extra', async () => {
    await using workdir = await createCatalogWorkdir();
    await workdir.write(
      '.agents/skills/deploy/SKILL.md',
      markdown(
        [
          'name: deploy',
          'description: >',
          '  Deploys the app to staging.',
          'license: MIT',
          'compatibility: needs kubectl',
          'metadata:',
          '  owner: ops',
          '  level: 2',
          'allowed-tools: [shell_exec, read_file]',
          'color: blue',
        ].join('\n'),
        '# Deploy\n\nRun the script.\n',
      ),
    );
    const scan = await scanProjectCatalog(workdir.path);
    expect(scan.problems).toEqual([]);
    expect(scan.skills).toEqual([
      {
        name: 'deploy',
        description: 'Deploys the app to staging.',
        path: '.agents/skills/deploy/SKILL.md',
        source: '.agents',
        license: 'MIT',
        compatibility: 'needs kubectl',
        metadata: { owner: 'ops', level: 2 },
        allowedTools: ['shell_exec', 'read_file'],
        extra: { color: 'blue' },
      },
    ]);
  });

  it('names a skill after its folder when the frontmatter has no name, and splits allowed-tools written as one string', async () => {
    await using workdir = await createCatalogWorkdir();
    await workdir.write(
      '.claude/skills/pdf-tools/SKILL.md',
      markdown('description: Works with PDFs\nallowed-tools: Read, Grep  Bash'),
    );
    const scan = await scanProjectCatalog(workdir.path);
    expect(scan.problems).toEqual([]);
    expect(scan.skills).toEqual([
      {
        name: 'pdf-tools',
        description: 'Works with PDFs',
        path: '.claude/skills/pdf-tools/SKILL.md',
        source: '.claude',
        allowedTools: ['Read', 'Grep', 'Bash'],
      },
    ]);
  });

  it('offers a skill under its frontmatter name when it differs from the folder, with a warning', async () => {
    await using workdir = await createCatalogWorkdir();
    await workdir.write('.agents/skills/old-name/SKILL.md', markdown('name: new-name\ndescription: d'));
    const scan = await scanProjectCatalog(workdir.path);
    expect(scan.skills.map((skill) => skill.name)).toEqual(['new-name']);
    expect(scan.problems).toEqual([
      {
        path: '.agents/skills/old-name/SKILL.md',
        severity: 'warning',
        message: expect.stringContaining('"new-name" differs from its folder\'s "old-name"'),
      },
    ]);
  });

  it('skips a skill whose name is not valid with an error, and keeps the others', async () => {
    await using workdir = await createCatalogWorkdir();
    await workdir.write('.agents/skills/bad/SKILL.md', markdown('name: Bad_Name\ndescription: d'));
    await workdir.write('.agents/skills/Upper Case/SKILL.md', markdown('description: d'));
    await workdir.write('.agents/skills/good/SKILL.md', markdown('description: d'));
    const scan = await scanProjectCatalog(workdir.path);
    expect(scan.skills.map((skill) => skill.name)).toEqual(['good']);
    expect(scan.problems).toEqual([
      {
        path: '.agents/skills/Upper Case/SKILL.md',
        severity: 'error',
        message: expect.stringContaining('the name "Upper Case" (from the file name) is not valid'),
      },
      {
        path: '.agents/skills/bad/SKILL.md',
        severity: 'error',
        message: expect.stringContaining('the name "Bad_Name" is not valid'),
      },
    ]);
  });

  it('skips a skill without a description, or without frontmatter, with a warning naming the file', async () => {
    await using workdir = await createCatalogWorkdir();
    await workdir.write('.agents/skills/no-description/SKILL.md', markdown('name: no-description'));
    await workdir.write('.agents/skills/plain/SKILL.md', '# Just Markdown\n');
    const scan = await scanProjectCatalog(workdir.path);
    expect(scan.skills).toEqual([]);
    expect(scan.problems).toEqual([
      {
        path: '.agents/skills/no-description/SKILL.md',
        severity: 'warning',
        message: expect.stringContaining('no `description`'),
      },
      {
        path: '.agents/skills/plain/SKILL.md',
        severity: 'warning',
        message: expect.stringContaining('no frontmatter, so no description'),
      },
    ]);
  });

  it('skips a skill whose description is longer than 1,024 characters, saying so', async () => {
    await using workdir = await createCatalogWorkdir();
    await workdir.write('.agents/skills/long/SKILL.md', markdown(`description: ${'x'.repeat(1_025)}`));
    const scan = await scanProjectCatalog(workdir.path);
    expect(scan.skills).toEqual([]);
    expect(scan.problems).toEqual([
      {
        path: '.agents/skills/long/SKILL.md',
        severity: 'error',
        message: 'skill skipped: the description is 1025 characters, more than the 1024 allowed; shorten it',
      },
    ]);
  });

  it("reports broken YAML with the library's message and the file's line", async () => {
    await using workdir = await createCatalogWorkdir();
    await workdir.write('.agents/skills/broken/SKILL.md', markdown('name: broken\ndescription: [unclosed'));
    await workdir.write('.agents/skills/fine/SKILL.md', markdown('description: d'));
    const scan = await scanProjectCatalog(workdir.path);
    expect(scan.skills.map((skill) => skill.name)).toEqual(['fine']);
    expect(scan.problems).toHaveLength(1);
    expect(scan.problems[0]).toMatchObject({ path: '.agents/skills/broken/SKILL.md', severity: 'error' });
    // Line 4 of the file is the closing `---`, where the flow sequence should have ended.
    expect(scan.problems[0]?.message).toMatch(/^skill skipped: invalid YAML: .* at line 4, column 1$/);
  });

  it('warns about a skill folder without a SKILL.md', async () => {
    await using workdir = await createCatalogWorkdir();
    await workdir.write('.agents/skills/empty/notes.md', 'notes');
    const scan = await scanProjectCatalog(workdir.path);
    expect(scan.skills).toEqual([]);
    expect(scan.problems).toEqual([
      {
        path: '.agents/skills/empty',
        severity: 'warning',
        message: 'the skill folder has no SKILL.md; it is not a skill',
      },
    ]);
  });

  it('reads a 10 MB SKILL.md up to the cap and reports its real size', async () => {
    await using workdir = await createCatalogWorkdir();
    const size = 10 * 1024 * 1024;
    await writeSparseFile(
      await workdir.write('.agents/skills/big/SKILL.md', ''),
      markdown('description: big', 'body\n'),
      size,
    );
    const scan = await scanProjectCatalog(workdir.path);
    expect(scan.skills.map((skill) => skill.name)).toEqual(['big']);
    expect(scan.problems).toEqual([
      {
        path: '.agents/skills/big/SKILL.md',
        severity: 'warning',
        message: expect.stringContaining(`the file is ${size} bytes, more than the ${MAX_CATALOG_FILE_BYTES} read`),
      },
    ]);
  });

  it('reads only the first bytes of a SKILL.md too large to read whole (8 GiB, sparse)', async () => {
    await using workdir = await createCatalogWorkdir();
    // Reading it whole fails (a buffer holds at most 2 GiB less one byte for readFile) or runs out of memory.
    const size = 8 * 1024 ** 3;
    await writeSparseFile(
      await workdir.write('.agents/skills/huge/SKILL.md', ''),
      markdown('description: huge', 'body\n'),
      size,
    );
    const scan = await scanProjectCatalog(workdir.path);
    expect(scan.skills.map((skill) => skill.name)).toEqual(['huge']);
    expect(scan.problems.map((problem) => [problem.severity, problem.message.split(';')[0]])).toEqual([
      ['warning', `the file is ${size} bytes, more than the ${MAX_CATALOG_FILE_BYTES} read`],
    ]);
  });

  it('skips, with an error, a skill whose frontmatter does not close within the cap', async () => {
    await using workdir = await createCatalogWorkdir();
    await workdir.write('.agents/skills/endless/SKILL.md', `---\ndescription: d\n${'x: y\n'.repeat(60_000)}---\n`);
    const scan = await scanProjectCatalog(workdir.path);
    expect(scan.skills).toEqual([]);
    expect(scan.problems.map((problem) => [problem.severity, problem.message])).toEqual([
      ['warning', expect.stringContaining('bytes, more than the')],
      [
        'error',
        `skill skipped: the frontmatter does not close (\`---\`) within the first ${MAX_CATALOG_FILE_BYTES} bytes`,
      ],
    ]);
  });

  it('refuses skills whose folder, SKILL.md or skills folder leads outside the workdir', async () => {
    await using workdir = await createCatalogWorkdir();
    await using outside = await createOutsideDir();
    await mkdir(join(outside.path, 'skill'));
    await writeFile(join(outside.path, 'skill', 'SKILL.md'), markdown('description: from elsewhere'));
    await workdir.write('.agents/skills/local/SKILL.md', markdown('description: local'));
    await symlink(join(outside.path, 'skill'), join(workdir.path, '.agents/skills/linked-folder'));
    await mkdir(join(workdir.path, '.agents/skills/linked-file'));
    await symlink(join(outside.path, 'skill', 'SKILL.md'), join(workdir.path, '.agents/skills/linked-file/SKILL.md'));
    await mkdir(join(workdir.path, '.claude'));
    await symlink(outside.path, join(workdir.path, '.claude/skills'));
    const scan = await scanProjectCatalog(workdir.path);
    expect(scan.skills.map((skill) => skill.name)).toEqual(['local']);
    expect(scan.problems).toEqual([
      {
        path: '.agents/skills/linked-file/SKILL.md',
        severity: 'error',
        message: `refused: SKILL.md leads outside the workdir (to ${join(outside.path, 'skill', 'SKILL.md')})`,
      },
      {
        path: '.agents/skills/linked-folder',
        severity: 'error',
        message: `refused: the skill folder leads outside the workdir (to ${join(outside.path, 'skill')})`,
      },
      {
        path: '.claude/skills',
        severity: 'error',
        message: `refused: the skills folder leads outside the workdir (to ${outside.path})`,
      },
    ]);
  });

  it('follows a symlink that stays inside the workdir', async () => {
    await using workdir = await createCatalogWorkdir();
    await workdir.write('shared/review/SKILL.md', markdown('description: Reviews code'));
    await mkdir(join(workdir.path, '.agents/skills'), { recursive: true });
    await symlink(join(workdir.path, 'shared/review'), join(workdir.path, '.agents/skills/review'));
    const scan = await scanProjectCatalog(workdir.path);
    expect(scan.problems).toEqual([]);
    expect(scan.skills).toEqual([
      { name: 'review', description: 'Reviews code', path: '.agents/skills/review/SKILL.md', source: '.agents' },
    ]);
  });

  it('prefers the .agents skill of a name over the .claude one, with a warning naming both files', async () => {
    await using workdir = await createCatalogWorkdir();
    await workdir.write('.agents/skills/deploy/SKILL.md', markdown('description: the agents one'));
    await workdir.write('.claude/skills/deploy/SKILL.md', markdown('description: the claude one'));
    await workdir.write('.claude/skills/lint/SKILL.md', markdown('description: only in claude'));
    const scan = await scanProjectCatalog(workdir.path);
    expect(scan.skills.map((skill) => [skill.name, skill.description])).toEqual([
      ['deploy', 'the agents one'],
      ['lint', 'only in claude'],
    ]);
    expect(scan.problems).toEqual([
      {
        path: '.claude/skills/deploy/SKILL.md',
        severity: 'warning',
        message:
          'skill "deploy" of .claude/skills/deploy/SKILL.md is ignored: .agents/skills/deploy/SKILL.md has the ' +
          'same name and .agents wins over .claude',
      },
    ]);
  });

  it('reports a SKILL.md that is not a regular file (a folder, a FIFO) without waiting on it', async () => {
    await using workdir = await createCatalogWorkdir();
    await mkdir(join(workdir.path, '.agents/skills/folder/SKILL.md'), { recursive: true });
    await mkdir(join(workdir.path, '.agents/skills/fifo'), { recursive: true });
    // Opening a FIFO for reading blocks until a writer comes: the scan must not.
    execFileSync('mkfifo', [join(workdir.path, '.agents/skills/fifo/SKILL.md')]);
    const scan = await scanProjectCatalog(workdir.path);
    expect(scan.skills).toEqual([]);
    expect(scan.problems).toEqual([
      {
        path: '.agents/skills/fifo/SKILL.md',
        severity: 'error',
        message: 'the file could not be read: not a regular file',
      },
      {
        path: '.agents/skills/folder/SKILL.md',
        severity: 'error',
        message: 'the file could not be read: not a regular file',
      },
    ]);
  });
});

describe('agents', () => {
  it('reads tools, permission, model and maxSteps, and the trimmed body as the prompt', async () => {
    await using workdir = await createCatalogWorkdir();
    await workdir.write(
      '.agents/agents/reviewer.md',
      markdown(
        [
          'description: Reviews a change',
          'tools: [read_file, grep]',
          'permission:',
          '  shell_exec: deny',
          '  read_file: { "*.env": deny }',
          'model: anthropic/claude-sonnet-4',
          'maxSteps: 12',
          'color: red',
        ].join('\n'),
        '\nYou review code.\n\n',
      ),
    );
    await workdir.write(
      '.claude/agents/writer.md',
      markdown('name: scribe\ndescription: Writes\ntools: read_file, write_file'),
    );
    await workdir.write('.claude/agents/notes.txt', 'not an agent');
    const scan = await scanProjectCatalog(workdir.path);
    expect(scan.problems).toEqual([]);
    expect(scan.agents).toEqual([
      {
        name: 'reviewer',
        description: 'Reviews a change',
        path: '.agents/agents/reviewer.md',
        source: '.agents',
        tools: ['read_file', 'grep'],
        permission: { shell_exec: 'deny', read_file: { '*.env': 'deny' } },
        model: 'anthropic/claude-sonnet-4',
        maxSteps: 12,
        prompt: 'You review code.',
      },
      {
        name: 'scribe',
        description: 'Writes',
        path: '.claude/agents/writer.md',
        source: '.claude',
        tools: ['read_file', 'write_file'],
        prompt: '',
      },
    ]);
  });

  it('skips, with an error, an agent whose permission is not a mapping, and keeps the others', async () => {
    await using workdir = await createCatalogWorkdir();
    await workdir.write('.agents/agents/loose.md', markdown('description: d\npermission: allow'));
    await workdir.write('.agents/agents/steps.md', markdown('description: d\nmaxSteps: 0'));
    await workdir.write('.agents/agents/fine.md', markdown('description: d'));
    const scan = await scanProjectCatalog(workdir.path);
    expect(scan.agents.map((agent) => agent.name)).toEqual(['fine']);
    expect(scan.problems).toEqual([
      {
        path: '.agents/agents/loose.md',
        severity: 'error',
        message: 'agent skipped: `permission` must be a mapping of tool names to rules, not a string',
      },
      {
        path: '.agents/agents/steps.md',
        severity: 'error',
        message: 'agent skipped: `maxSteps` must be a whole number from 1 to 1000, not 0',
      },
    ]);
  });

  it('prefers the .agents agent of a name and refuses an agent file linked from outside the workdir', async () => {
    await using workdir = await createCatalogWorkdir();
    await using outside = await createOutsideDir();
    await workdir.write('.agents/agents/helper.md', markdown('description: agents'));
    await workdir.write('.claude/agents/helper.md', markdown('description: claude'));
    const elsewhere = join(outside.path, 'spy.md');
    await writeFile(elsewhere, markdown('description: spy'));
    await symlink(elsewhere, join(workdir.path, '.claude/agents/spy.md'));
    const scan = await scanProjectCatalog(workdir.path);
    expect(scan.agents.map((agent) => [agent.name, agent.description])).toEqual([['helper', 'agents']]);
    expect(scan.problems).toEqual([
      {
        path: '.claude/agents/helper.md',
        severity: 'warning',
        message: expect.stringContaining('.agents/agents/helper.md has the same name and .agents wins over .claude'),
      },
      {
        path: '.claude/agents/spy.md',
        severity: 'error',
        message: `refused: the agent file leads outside the workdir (to ${elsewhere})`,
      },
    ]);
  });

  it(`reads at most ${MAX_AGENTS} agents and says, once, how many more were left`, async () => {
    await using workdir = await createCatalogWorkdir();
    for (let index = 0; index < MAX_AGENTS + 3; index += 1) {
      await workdir.write(`.agents/agents/a${String(index).padStart(3, '0')}.md`, markdown('description: d'));
    }
    const scan = await scanProjectCatalog(workdir.path);
    expect(scan.agents).toHaveLength(MAX_AGENTS);
    expect(scan.problems).toEqual([
      {
        path: '.agents/agents/a200.md',
        severity: 'warning',
        message: `more than ${MAX_AGENTS} agents: 3 more entries from here on were not read`,
      },
    ]);
  });
});

describe('the problems list', () => {
  it('holds at most 1,000 entries, the last saying how many more there were', async () => {
    await using workdir = await createCatalogWorkdir();
    for (let index = 0; index < 1_005; index += 1) {
      await mkdir(join(workdir.path, `.agents/skills/s${String(index).padStart(4, '0')}`), { recursive: true });
    }
    const scan = await scanProjectCatalog(workdir.path);
    expect(scan.problems).toHaveLength(1_000);
    expect(scan.problems.at(-1)).toEqual({
      path: '.agents/skills/s0999',
      severity: 'warning',
      message: '6 more problems, from this file on, are not listed',
    });
  });
});

describe('the YAML parser', () => {
  /** Whether a fresh node process resolves `yaml` while scanning the workdir (the idle worker's memory is measured). */
  function scanLoadsYaml(workdir: string): boolean {
    const script = `
      import { registerHooks } from 'node:module';
      let loaded = false;
      registerHooks({ resolve(specifier, context, next) { if (specifier === 'yaml') loaded = true; return next(specifier, context); } });
      const { scanProjectCatalog } = await import(${JSON.stringify(new URL('./scan-project-catalog.ts', import.meta.url).href)});
      await scanProjectCatalog(process.argv[1]);
      process.stdout.write(JSON.stringify(loaded));`;
    const output = execFileSync(process.execPath, ['--input-type=module', '-e', script, workdir], { encoding: 'utf8' });
    return JSON.parse(output) as boolean;
  }

  it('is not loaded for a project whose files have no frontmatter, and is once one has', async () => {
    await using workdir = await createCatalogWorkdir();
    await workdir.write('.agents/skills/plain/SKILL.md', '# no frontmatter\n');
    expect(scanLoadsYaml(workdir.path)).toBe(false);
    await workdir.write('.agents/skills/real/SKILL.md', markdown('description: d'));
    expect(scanLoadsYaml(workdir.path)).toBe(true);
  });
});

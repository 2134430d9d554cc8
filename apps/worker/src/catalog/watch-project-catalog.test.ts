import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createSilentLogger } from '@molf/logging';
import type { ProjectCatalog } from '@molf/protocol';
import { describe, expect, it } from 'vitest';
import { createCatalogWorkdir, markdown, waitFor } from './catalog-test-kit.ts';
import { watchProjectCatalog } from './watch-project-catalog.ts';

/**
 * A watcher whose poll never comes within a test, so that only fs.watch can bring a change, and
 * every snapshot it sends. Closed on dispose.
 */
async function startWatcher(workdir: string, options: { now?: () => number } = {}) {
  const sent: ProjectCatalog[] = [];
  const watcher = await watchProjectCatalog({
    workdir,
    logger: createSilentLogger(),
    onChange: (catalog) => sent.push(catalog),
    pollMs: 3_600_000,
    now: options.now,
  });
  return {
    watcher,
    sent,
    skills: () => watcher.current().skills.map((skill) => [skill.name, skill.description]),
    [Symbol.asyncDispose]: () => watcher.close(),
  };
}

describe('watching the skills and agents', () => {
  it('sees a skill added, edited, renamed and deleted, each as a snapshot with a higher version', async () => {
    await using workdir = await createCatalogWorkdir();
    await mkdir(join(workdir.path, '.agents/skills'), { recursive: true });
    await using watching = await startWatcher(workdir.path);
    expect(watching.watcher.current()).toEqual({ version: 1, skills: [], agents: [], problems: [] });

    await workdir.write('.agents/skills/deploy/SKILL.md', markdown('description: first'));
    await waitFor(() => watching.skills().length === 1, 'the new skill');
    expect(watching.skills()).toEqual([['deploy', 'first']]);
    const added = watching.watcher.current().version;
    expect(added).toBeGreaterThan(1);

    await writeFile(join(workdir.path, '.agents/skills/deploy/SKILL.md'), markdown('description: second'));
    await waitFor(() => watching.skills()[0]?.[1] === 'second', 'the edited description');
    const edited = watching.watcher.current().version;
    expect(edited).toBeGreaterThan(added);

    await rename(join(workdir.path, '.agents/skills/deploy'), join(workdir.path, '.agents/skills/ship'));
    await waitFor(() => watching.skills()[0]?.[0] === 'ship', 'the renamed skill');
    const renamed = watching.watcher.current().version;
    expect(renamed).toBeGreaterThan(edited);
    expect(watching.skills()).toEqual([['ship', 'second']]);

    await rm(join(workdir.path, '.agents/skills/ship'), { recursive: true });
    await waitFor(() => watching.skills().length === 0, 'the skill to go');
    expect(watching.watcher.current().version).toBeGreaterThan(renamed);
    // Every snapshot that changed went out, in order.
    expect(watching.sent.map((catalog) => catalog.version)).toEqual(
      [...watching.sent.keys()].map((index) => index + 2),
    );
  });

  it('sees the skills of a .agents/skills folder made after the start', async () => {
    await using workdir = await createCatalogWorkdir();
    await using watching = await startWatcher(workdir.path);
    await mkdir(join(workdir.path, '.agents'));
    await mkdir(join(workdir.path, '.agents/skills'));
    await mkdir(join(workdir.path, '.agents/skills/late'));
    await writeFile(join(workdir.path, '.agents/skills/late/SKILL.md'), markdown('description: came late'));
    await waitFor(() => watching.skills().length === 1, 'the skill of the new folder');
    expect(watching.skills()).toEqual([['late', 'came late']]);
    expect(watching.sent.at(-1)?.version).toBe(watching.watcher.current().version);
  });

  it('watches a skills folder deleted and made again (which may get the same inode), and a skill folder new in it', async () => {
    await using workdir = await createCatalogWorkdir();
    await workdir.write('.claude/skills/one/SKILL.md', markdown('description: one'));
    await using watching = await startWatcher(workdir.path);
    expect(watching.skills()).toEqual([['one', 'one']]);
    await rm(join(workdir.path, '.claude/skills'), { recursive: true });
    await waitFor(() => watching.skills().length === 0, 'the skills to go with their folder');
    await mkdir(join(workdir.path, '.claude/skills'));
    // An agent beside it shows when a scan has seen the new folder (an empty one changes nothing).
    await workdir.write('.claude/agents/marker.md', markdown('description: marker'));
    await waitFor(() => watching.watcher.current().agents.length === 1, 'a scan after the folder came back');
    // Only a watcher on the new skills folder sees this one, and only one on the new skill folder the next.
    await mkdir(join(workdir.path, '.claude/skills/two'));
    await waitFor(() => watching.watcher.current().problems.length === 1, 'the skill folder without its SKILL.md');
    await writeFile(join(workdir.path, '.claude/skills/two/SKILL.md'), markdown('description: two'));
    await waitFor(() => watching.skills().length === 1, 'the skill in the folder made again');
    expect(watching.skills()).toEqual([['two', 'two']]);
    expect(watching.watcher.current().problems).toEqual([]);
  });

  it('sees an agent file added', async () => {
    await using workdir = await createCatalogWorkdir();
    await mkdir(join(workdir.path, '.claude/agents'), { recursive: true });
    await using watching = await startWatcher(workdir.path);
    // Written whole and then moved in, as editors save: a scan on a loaded machine could otherwise
    // read the file between its creation and its content, and send that empty agent first.
    const whole = join(workdir.path, 'helper.md.part');
    await writeFile(whole, markdown('description: helps', 'Be helpful.'));
    await rename(whole, join(workdir.path, '.claude/agents/helper.md'));
    await waitFor(() => watching.watcher.current().agents.length === 1, 'the new agent');
    expect(watching.watcher.current().agents[0]).toMatchObject({ name: 'helper', prompt: 'Be helpful.' });
    expect(watching.sent).toHaveLength(1);
    expect(watching.sent[0]?.version).toBe(2);
  });

  it('reads again only the file that changed: the unchanged skill is the same entry in the next snapshot', async () => {
    await using workdir = await createCatalogWorkdir();
    await workdir.write('.agents/skills/kept/SKILL.md', markdown('description: kept'));
    await workdir.write('.agents/skills/edited/SKILL.md', markdown('description: first'));
    // A clock an hour ahead: every file has settled, so the parse of each is kept at once.
    await using watching = await startWatcher(workdir.path, { now: () => Date.now() + 3_600_000 });
    const [edited, kept] = watching.watcher.current().skills;
    expect([edited?.name, kept?.name]).toEqual(['edited', 'kept']);
    await writeFile(join(workdir.path, '.agents/skills/edited/SKILL.md'), markdown('description: second'));
    await waitFor(() => watching.skills()[0]?.[1] === 'second', 'the edited description');
    expect(watching.watcher.current().skills[1]).toBe(kept);
    expect(watching.watcher.current().skills[0]).not.toBe(edited);
  });

  it('keeps the version when a scan finds nothing new, and sends nothing', async () => {
    await using workdir = await createCatalogWorkdir();
    await workdir.write('.agents/skills/deploy/SKILL.md', markdown('description: d'));
    await using watching = await startWatcher(workdir.path);
    await watching.watcher.rescan();
    await watching.watcher.rescan();
    expect(watching.watcher.current().version).toBe(1);
    expect(watching.sent).toEqual([]);
  });

  it('finds a change with the poll alone, where no folder is watched', async () => {
    await using workdir = await createCatalogWorkdir();
    const sent: ProjectCatalog[] = [];
    // The debounce never ends within the test: only the poll can bring the change.
    await using watcher = Object.assign(
      await watchProjectCatalog({
        workdir: workdir.path,
        logger: createSilentLogger(),
        onChange: (catalog) => sent.push(catalog),
        debounceMs: 3_600_000,
        pollMs: 50,
      }),
      { [Symbol.asyncDispose]: () => watcher.close() },
    );
    await workdir.write('.agents/agents/polled.md', markdown('description: found by the poll'));
    // A poll may run between the folder's creation and the file's write: that one sends the folder
    // without the agent, and a later one the agent.
    await waitFor(
      () => sent.some((catalog) => catalog.agents.some((agent) => agent.name === 'polled')),
      'the poll to find the agent',
    );
    expect(sent.at(-1)?.agents.map((agent) => agent.name)).toEqual(['polled']);
  });
});

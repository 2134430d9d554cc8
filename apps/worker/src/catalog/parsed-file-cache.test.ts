import { mkdir, rename, rm, stat, symlink, unlink, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createCatalogWorkdir, markdown } from './catalog-test-kit.ts';
import { createParsedFileCache } from './parsed-file-cache.ts';
import { type CatalogFileCache, scanProjectCatalog } from './scan-project-catalog.ts';

/** A cache whose clock is an hour ahead, so every file has settled and its parse is kept at once. */
function createSettledCache(): CatalogFileCache {
  return createParsedFileCache({ now: () => Date.now() + 3_600_000 });
}

/**
 * Resolves once the file system's clock is past `ctimeMs`, so that a change from now on gets a later
 * ctime even where time stamps are coarse: what the cache's settle time stands for, skipped here by
 * the clock ahead.
 */
async function waitForFileClockPast(workdir: string, ctimeMs: number): Promise<void> {
  const probe = join(workdir, 'clock-probe');
  const deadline = Date.now() + 120_000;
  for (;;) {
    await writeFile(probe, '');
    if ((await stat(probe)).ctimeMs > ctimeMs) return;
    if (Date.now() > deadline) throw new Error('timed out waiting for the file system clock to move');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

function descriptions(scan: Awaited<ReturnType<typeof scanProjectCatalog>>): string[][] {
  return [...scan.skills, ...scan.agents].map((entry) => [entry.name, entry.description]);
}

describe('rescanning with a file cache', () => {
  it('reuses the parse of a file unchanged since it settled, problems included', async () => {
    await using workdir = await createCatalogWorkdir();
    await workdir.write('.agents/skills/deploy/SKILL.md', markdown('description: d\nlicense: [not text]'));
    await workdir.write('.agents/agents/helper.md', markdown('description: helps', 'Be helpful.'));
    const cache = createSettledCache();
    const first = await scanProjectCatalog(workdir.path, { cache });
    const second = await scanProjectCatalog(workdir.path, { cache });
    expect(second.skills[0]).toBe(first.skills[0]);
    expect(second.agents[0]).toBe(first.agents[0]);
    expect(second.problems).toEqual([
      {
        path: '.agents/skills/deploy/SKILL.md',
        severity: 'warning',
        message: '`license` left out: it must be text, not a list',
      },
    ]);
    expect(second.problems[0]).toBe(first.problems[0]);
    expect(cache.size).toBe(2);
  });

  it('keeps nothing of a file changed within the settle time before its read: a same-size edit in the same time stamp tick is still seen', async () => {
    await using workdir = await createCatalogWorkdir();
    await workdir.write('.agents/skills/deploy/SKILL.md', markdown('description: aaaa'));
    // An hour to settle: within the test, a file is always as fresh as one changed in the tick of its read.
    const cache: CatalogFileCache = createParsedFileCache({ settleMs: 3_600_000 });
    const first = await scanProjectCatalog(workdir.path, { cache });
    expect(first.skills[0]?.description).toBe('aaaa');
    expect(cache.size).toBe(0);
    await writeFile(join(workdir.path, '.agents/skills/deploy/SKILL.md'), markdown('description: bbbb'));
    const second = await scanProjectCatalog(workdir.path, { cache });
    expect(descriptions(second)).toEqual([['deploy', 'bbbb']]);
    const third = await scanProjectCatalog(workdir.path, { cache });
    expect(third.skills[0]).not.toBe(second.skills[0]);
    expect(third.skills[0]).toEqual(second.skills[0]);
  });

  it('sees an edit that keeps the size', async () => {
    await using workdir = await createCatalogWorkdir();
    const file = await workdir.write('.agents/skills/deploy/SKILL.md', markdown('description: aaaa'));
    const agent = await workdir.write('.agents/agents/helper.md', markdown('description: cccc'));
    const cache = createSettledCache();
    expect(descriptions(await scanProjectCatalog(workdir.path, { cache }))).toEqual([
      ['deploy', 'aaaa'],
      ['helper', 'cccc'],
    ]);
    const before = await stat(file);
    await waitForFileClockPast(workdir.path, Math.max(before.ctimeMs, (await stat(agent)).ctimeMs));
    await writeFile(file, markdown('description: bbbb'));
    await writeFile(agent, markdown('description: dddd'));
    expect((await stat(file)).size).toBe(before.size);
    expect(descriptions(await scanProjectCatalog(workdir.path, { cache }))).toEqual([
      ['deploy', 'bbbb'],
      ['helper', 'dddd'],
    ]);
  });

  it('sees an edit whose mtime was put back, as `tar` and `rsync -t` do, by its ctime', async () => {
    await using workdir = await createCatalogWorkdir();
    const file = await workdir.write('.agents/skills/deploy/SKILL.md', markdown('description: aaaa'));
    // Whole seconds, which utimes sets exactly.
    const old = 1_700_000_000;
    await utimes(file, old, old);
    const cache = createSettledCache();
    expect(descriptions(await scanProjectCatalog(workdir.path, { cache }))).toEqual([['deploy', 'aaaa']]);
    const before = await stat(file);
    await waitForFileClockPast(workdir.path, before.ctimeMs);
    await writeFile(file, markdown('description: bbbb'));
    await utimes(file, old, old);
    const after = await stat(file);
    expect([after.ino, after.size, after.mtimeMs]).toEqual([before.ino, before.size, before.mtimeMs]);
    expect(descriptions(await scanProjectCatalog(workdir.path, { cache }))).toEqual([['deploy', 'bbbb']]);
  });

  it('sees a file renamed over another of the same size', async () => {
    await using workdir = await createCatalogWorkdir();
    const file = await workdir.write('.agents/skills/deploy/SKILL.md', markdown('description: aaaa'));
    const cache = createSettledCache();
    expect(descriptions(await scanProjectCatalog(workdir.path, { cache }))).toEqual([['deploy', 'aaaa']]);
    // How editors and `git checkout` save: a new file, renamed over the old one.
    const draft = await workdir.write('draft.md', markdown('description: bbbb'));
    await rename(draft, file);
    expect(descriptions(await scanProjectCatalog(workdir.path, { cache }))).toEqual([['deploy', 'bbbb']]);
  });

  it('sees a file deleted and made again with the same size (which may get the same inode)', async () => {
    await using workdir = await createCatalogWorkdir();
    const file = await workdir.write('.agents/agents/helper.md', markdown('description: aaaa'));
    const cache = createSettledCache();
    expect(descriptions(await scanProjectCatalog(workdir.path, { cache }))).toEqual([['helper', 'aaaa']]);
    await waitForFileClockPast(workdir.path, (await stat(file)).ctimeMs);
    await unlink(file);
    await writeFile(file, markdown('description: bbbb'));
    expect(descriptions(await scanProjectCatalog(workdir.path, { cache }))).toEqual([['helper', 'bbbb']]);
  });

  it('sees a SKILL.md link pointed at another file, even one of the same size and time', async () => {
    await using workdir = await createCatalogWorkdir();
    const one = await workdir.write('shared/one.md', markdown('description: aaaa'));
    const two = await workdir.write('shared/two.md', markdown('description: bbbb'));
    await mkdir(join(workdir.path, '.agents/skills/deploy'), { recursive: true });
    const link = join(workdir.path, '.agents/skills/deploy/SKILL.md');
    await symlink(one, link);
    const cache = createSettledCache();
    expect(descriptions(await scanProjectCatalog(workdir.path, { cache }))).toEqual([['deploy', 'aaaa']]);
    await rename(await symlinkAt(workdir.path, two), link);
    expect(descriptions(await scanProjectCatalog(workdir.path, { cache }))).toEqual([['deploy', 'bbbb']]);
  });

  it('names a skill after its new folder when a linked folder is renamed, though the file it leads to is the same', async () => {
    await using workdir = await createCatalogWorkdir();
    await workdir.write('shared/review/SKILL.md', markdown('description: reviews'));
    await mkdir(join(workdir.path, '.agents/skills'), { recursive: true });
    await symlink(join(workdir.path, 'shared/review'), join(workdir.path, '.agents/skills/review'));
    const cache = createSettledCache();
    expect(descriptions(await scanProjectCatalog(workdir.path, { cache }))).toEqual([['review', 'reviews']]);
    await rename(join(workdir.path, '.agents/skills/review'), join(workdir.path, '.agents/skills/critique'));
    const scan = await scanProjectCatalog(workdir.path, { cache });
    expect(scan.skills).toEqual([
      { name: 'critique', description: 'reviews', path: '.agents/skills/critique/SKILL.md', source: '.agents' },
    ]);
  });

  it('forgets the files that are gone at the next scan', async () => {
    await using workdir = await createCatalogWorkdir();
    await workdir.write('.agents/skills/deploy/SKILL.md', markdown('description: d'));
    await workdir.write('.claude/skills/lint/SKILL.md', markdown('description: d'));
    const agent = await workdir.write('.claude/agents/helper.md', markdown('description: d'));
    const cache = createSettledCache();
    await scanProjectCatalog(workdir.path, { cache });
    expect(cache.size).toBe(3);
    await unlink(agent);
    await scanProjectCatalog(workdir.path, { cache });
    expect(cache.size).toBe(2);
    await rm(join(workdir.path, '.claude'), { recursive: true });
    await rm(join(workdir.path, '.agents/skills/deploy'), { recursive: true });
    expect(descriptions(await scanProjectCatalog(workdir.path, { cache }))).toEqual([]);
    expect(cache.size).toBe(0);
  });
});

/** A new symlink to `target` in the workdir, for renaming over another link in one step. */
async function symlinkAt(workdir: string, target: string): Promise<string> {
  const path = join(workdir, 'next-link');
  await symlink(target, path);
  return path;
}

import type { Dirent } from 'node:fs';
import { lstat, readdir, readFile, realpath } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve } from 'node:path';

/**
 * Submodule and worktree git directories protected one by one, at most. Past it (or past
 * MAX_GIT_ENTRIES), the whole `modules` or `worktrees` directory is read-only instead.
 */
export const MAX_GIT_DIRECTORIES = 64;
/** Directory entries read while looking for them (submodule names may contain `/`). */
export const MAX_GIT_ENTRIES = 1_024;

/** In a git directory: what makes git run code later (hooks, config) or read its config elsewhere (commondir). */
const PROTECTED_IN_GIT_DIRECTORY = ['hooks', 'config', 'config.worktree', 'commondir'] as const;
/** In a linked worktree's directory (`.git/worktrees/<name>`); its hooks and config are the common directory's. */
const PROTECTED_IN_WORKTREE = ['config.worktree', 'commondir'] as const;

/** What the sandbox binds of a workdir's git directories, every path a real one (no link) under the workdir. */
export type GitMounts = {
  /**
   * Directories bound onto themselves (read-write): a mount point cannot be renamed or removed
   * (EBUSY), so `mv .git .git.old && mkdir -p .git/hooks` no longer gets round the read-only hooks.
   */
  pinned: string[];
  /** Files and directories bound read-only (those that exist; the planner skips the others). */
  readOnly: string[];
};

type Budget = { directories: number; entries: number };

function isInside(parent: string, child: string): boolean {
  const path = relative(parent, child);
  return path !== '' && !path.startsWith('..') && !isAbsolute(path);
}

async function kind(path: string): Promise<'directory' | 'file' | 'link' | 'other' | undefined> {
  try {
    const info = await lstat(path);
    if (info.isSymbolicLink()) return 'link';
    return info.isDirectory() ? 'directory' : info.isFile() ? 'file' : 'other';
  } catch {
    return undefined;
  }
}

/** A directory's entries within the budget, or undefined when they would exceed it. */
async function entriesWithin(directory: string, budget: Budget): Promise<Dirent[] | undefined> {
  let entries: Dirent[];
  try {
    entries = await readdir(directory, { withFileTypes: true });
  } catch {
    return [];
  }
  budget.entries -= entries.length;
  return budget.entries < 0 ? undefined : entries;
}

/**
 * The git directories under `.git/modules` (a submodule's `name` may contain `/`: `modules/a/b`),
 * nested ones excepted (they are under each one's own `modules`); undefined past the budget.
 * Links are not followed.
 */
async function findModuleDirectories(root: string, budget: Budget): Promise<string[] | undefined> {
  const found: string[] = [];
  const pending = [root];
  for (let directory = pending.pop(); directory !== undefined; directory = pending.pop()) {
    const entries = await entriesWithin(directory, budget);
    if (entries === undefined) return undefined;
    for (const entry of entries) {
      if (!entry.isDirectory()) continue;
      const path = join(directory, entry.name);
      if ((await kind(join(path, 'HEAD'))) === 'file') {
        budget.directories -= 1;
        if (budget.directories < 0) return undefined;
        found.push(path);
      } else {
        pending.push(path);
      }
    }
  }
  return found;
}

async function protectGitDirectory(directory: string, plan: GitMounts, budget: Budget): Promise<void> {
  plan.pinned.push(directory);
  for (const name of PROTECTED_IN_GIT_DIRECTORY) plan.readOnly.push(join(directory, name));

  const modules = join(directory, 'modules');
  if ((await kind(modules)) === 'directory') {
    const found = await findModuleDirectories(modules, budget);
    if (found === undefined) {
      plan.readOnly.push(modules);
    } else {
      plan.pinned.push(modules);
      for (const module of found) await protectGitDirectory(module, plan, budget);
    }
  }

  const worktrees = join(directory, 'worktrees');
  if ((await kind(worktrees)) === 'directory') {
    const entries = await entriesWithin(worktrees, budget);
    const directories = entries?.filter((entry) => entry.isDirectory()) ?? [];
    budget.directories -= directories.length;
    if (entries === undefined || budget.directories < 0) {
      plan.readOnly.push(worktrees);
    } else {
      plan.pinned.push(worktrees);
      for (const entry of directories) {
        const worktree = join(worktrees, entry.name);
        plan.pinned.push(worktree);
        for (const name of PROTECTED_IN_WORKTREE) plan.readOnly.push(join(worktree, name));
      }
    }
  }
}

/** The git directory a `.git` file names (`gitdir: …`, relative to the file's directory), if readable. */
async function gitdirOf(file: string, workdir: string): Promise<string | undefined> {
  try {
    const text = (await readFile(file, 'utf8')).slice(0, 4_096);
    const match = /^gitdir: *(.+?)\s*$/m.exec(text);
    return match?.[1] === undefined ? undefined : resolve(workdir, match[1]);
  } catch {
    return undefined;
  }
}

/**
 * The mounts that keep a workdir's git directory from being turned into code that runs later, for
 * a canonical `workdir`: `.git` is pinned (a mount point), its hooks, config and commondir are
 * read-only, and so are those of the submodules under `.git/modules` (nested ones included) and
 * the commondir of each linked worktree under `.git/worktrees`, whose directories are pinned too
 * (the planner pins the directories between them). A `.git` file (the workdir is a linked worktree
 * or a submodule) is read-only, and the git directory it names protected if it is in the workdir.
 * Bounded: past MAX_GIT_DIRECTORIES or MAX_GIT_ENTRIES, `modules` or `worktrees` is read-only whole.
 */
export async function planGitMounts(workdir: string): Promise<GitMounts> {
  const plan: GitMounts = { pinned: [], readOnly: [] };
  const budget: Budget = { directories: MAX_GIT_DIRECTORIES, entries: MAX_GIT_ENTRIES };
  const dotGit = join(workdir, '.git');
  let gitDirectory: string | undefined;
  switch (await kind(dotGit)) {
    case 'directory':
      gitDirectory = dotGit;
      break;
    case 'file':
      plan.readOnly.push(dotGit);
      gitDirectory = await gitdirOf(dotGit, workdir);
      break;
    case 'link':
      // The link itself cannot be made a mount point; what it leads to can, when in the workdir.
      gitDirectory = await realpath(dotGit).catch(() => undefined);
      break;
    default:
      return plan;
  }
  if (
    gitDirectory !== undefined &&
    isInside(workdir, gitDirectory) &&
    (await kind(gitDirectory)) === 'directory' &&
    (await realpath(gitDirectory).catch(() => undefined)) === gitDirectory
  ) {
    await protectGitDirectory(gitDirectory, plan, budget);
  }
  return plan;
}

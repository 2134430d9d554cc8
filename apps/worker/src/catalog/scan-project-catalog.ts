import type { Dirent, Stats } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import {
  type AgentInfo,
  type CatalogProblem,
  type CatalogSource,
  MAX_AGENTS,
  MAX_CATALOG_FILE_BYTES,
  MAX_SKILLS,
  type ProjectCatalog,
  type SkillInfo,
} from '@molf/protocol';
import { type Location, locateInWorkdir } from './locate-in-workdir.ts';
import { parseAgentFile } from './parse-agent-file.ts';
import { createProblemReport, type ProblemReport } from './parse-catalog-markdown.ts';
import { parseSkillFile } from './parse-skill-file.ts';
import type { ParsedFileCache } from './parsed-file-cache.ts';
import { type CappedFile, readCappedFile } from './read-capped-file.ts';

/** Read first: on a name both define, `.agents` wins. */
export const CATALOG_SOURCES: readonly CatalogSource[] = ['.agents', '.claude'];
const MAX_PROBLEMS = 1_000;

/** One pass over the workdir's skills and agents: a snapshot without its version. */
export type CatalogScan = Omit<ProjectCatalog, 'version'> & {
  /**
   * The folders whose changes can change the catalog (absolute), each with its identity (device
   * and inode), so that a folder deleted and made again is watched anew.
   */
  directories: Map<string, string>;
};

/** What a SKILL.md or agent file gave: its entry (none when it is skipped) and its problems. */
export type ParsedCatalogFile = { skill?: SkillInfo; agent?: AgentInfo; problems: CatalogProblem[] };

/**
 * The parses of a workdir's files, kept from one scan to the next. A file is known by its real path
 * and the path it was found at, since both go into its entry (a skill's name defaults to its folder's,
 * and a folder linked to another can be renamed).
 */
export type CatalogFileCache = ParsedFileCache<ParsedCatalogFile>;

/**
 * Finds the skills (`{.agents,.claude}/skills/<folder>/SKILL.md`) and agents
 * (`{.agents,.claude}/agents/*.md`) of a canonical workdir. Never throws: a file that is broken,
 * unreadable or leads out of the workdir is a problem in the result, and the others still count.
 */
export async function scanProjectCatalog(
  workdir: string,
  options: {
    /**
     * Parses kept from the last scan of this workdir, reused for the files whose stat is unchanged,
     * and left holding this scan's. Default: none, every file is read.
     */
    cache?: CatalogFileCache;
  } = {},
): Promise<CatalogScan> {
  const scan: Scan = {
    workdir,
    cache: options.cache,
    skills: new Map(),
    agents: new Map(),
    problems: [],
    directories: new Map(),
    unread: { skills: undefined, agents: undefined },
  };
  const root = await locateInWorkdir(workdir, workdir);
  if (root.type === 'inside') scan.directories.set(workdir, identity(root.info));
  for (const source of CATALOG_SOURCES) {
    const base = await locateInWorkdir(workdir, join(workdir, source));
    // `.agents` itself may be a link elsewhere; what counts is where its folders lead (checked below).
    if (base.type === 'missing' || (base.type === 'inside' && !base.info.isDirectory())) continue;
    if (base.type === 'inside') scan.directories.set(join(workdir, source), identity(base.info));
    await scanFolder(scan, { source, kind: 'skills', readEntry: readSkillFolder });
    await scanFolder(scan, { source, kind: 'agents', readEntry: readAgentFile });
  }
  for (const kind of ['skills', 'agents'] as const) {
    const unread = scan.unread[kind];
    if (unread === undefined) continue;
    const max = kind === 'skills' ? MAX_SKILLS : MAX_AGENTS;
    scan.problems.push({
      path: unread.path,
      severity: 'warning',
      message: `more than ${max} ${kind}: ${unread.count} more entries from here on were not read`,
    });
  }
  options.cache?.sweep();
  return {
    skills: [...scan.skills.values()].sort(byName),
    agents: [...scan.agents.values()].sort(byName),
    problems: capProblems(scan.problems),
    directories: scan.directories,
  };
}

type Scan = {
  workdir: string;
  cache: CatalogFileCache | undefined;
  skills: Map<string, SkillInfo>;
  agents: Map<string, AgentInfo>;
  problems: CatalogProblem[];
  directories: Map<string, string>;
  /** Entries left unread past the cap, and where the first of them was. */
  unread: Record<'skills' | 'agents', { path: string; count: number } | undefined>;
};

type Entry = { source: CatalogSource; dirent: Dirent; path: string; location: Location & { type: 'inside' } };

async function scanFolder(
  scan: Scan,
  options: { source: CatalogSource; kind: 'skills' | 'agents'; readEntry: (scan: Scan, entry: Entry) => Promise<void> },
): Promise<void> {
  const { source, kind } = options;
  const path = join(source, kind);
  const absolute = join(scan.workdir, path);
  const report = createProblemReport(path, scan.problems);
  const folder = await locateInWorkdir(scan.workdir, absolute);
  if (!isUsableFolder(folder, { what: `the ${kind} folder`, report })) return;
  scan.directories.set(absolute, identity(folder.info));
  let dirents: Dirent[];
  try {
    dirents = await readdir(folder.canonical, { withFileTypes: true });
  } catch (error) {
    report('error', `the ${kind} folder could not be read: ${(error as Error).message}`);
    return;
  }
  // Name order, so that every scan of the same files gives the same snapshot; hidden entries
  // (`.DS_Store`, an editor's swap files) are not skills or agents.
  const names = dirents.filter((dirent) => !dirent.name.startsWith('.')).sort((a, b) => compare(a.name, b.name));
  const max = kind === 'skills' ? MAX_SKILLS : MAX_AGENTS;
  for (const [index, dirent] of names.entries()) {
    if (scan[kind].size >= max) {
      const unread = scan.unread[kind];
      const left = names.length - index;
      scan.unread[kind] = { path: unread?.path ?? join(path, dirent.name), count: (unread?.count ?? 0) + left };
      return;
    }
    if (!dirent.isDirectory() && !dirent.isFile() && !dirent.isSymbolicLink()) continue;
    const entryPath = join(path, dirent.name);
    const location = await locateInWorkdir(scan.workdir, join(absolute, dirent.name));
    if (location.type === 'missing') continue;
    if (location.type !== 'inside') {
      const entryReport = createProblemReport(entryPath, scan.problems);
      refuse(location, { what: kind === 'skills' ? 'the skill folder' : 'the agent file', report: entryReport });
      continue;
    }
    await options.readEntry(scan, { source, dirent, path: entryPath, location });
  }
}

async function readSkillFolder(scan: Scan, entry: Entry): Promise<void> {
  // Files beside the skill folders (a README) are not skills.
  if (!entry.location.info.isDirectory()) return;
  scan.directories.set(join(scan.workdir, entry.path), identity(entry.location.info));
  const path = join(entry.path, 'SKILL.md');
  const report = createProblemReport(path, scan.problems);
  const file = await locateInWorkdir(scan.workdir, join(entry.location.canonical, 'SKILL.md'));
  if (file.type === 'missing') {
    createProblemReport(entry.path, scan.problems)('warning', 'the skill folder has no SKILL.md; it is not a skill');
    return;
  }
  if (file.type !== 'inside') {
    refuse(file, { what: 'SKILL.md', report });
    return;
  }
  const parsed = await readThroughCache(scan, {
    path,
    location: file,
    parse: async () => {
      const read = await readCatalogFile(file.canonical, report);
      if (read === undefined) return undefined;
      return parseSkillFile({ path, source: entry.source, folderName: entry.dirent.name, file: read });
    },
  });
  if (parsed === undefined) return;
  scan.problems.push(...parsed.problems);
  if (parsed.skill !== undefined) keepFirst(scan.skills, parsed.skill, { kind: 'skill', report });
}

async function readAgentFile(scan: Scan, entry: Entry): Promise<void> {
  // Only Markdown files are agents: notes or a folder of drafts beside them are not.
  if (!entry.dirent.name.endsWith('.md') || entry.location.info.isDirectory()) return;
  const report = createProblemReport(entry.path, scan.problems);
  const parsed = await readThroughCache(scan, {
    path: entry.path,
    location: entry.location,
    parse: async () => {
      const read = await readCatalogFile(entry.location.canonical, report);
      if (read === undefined) return undefined;
      const fileStem = entry.dirent.name.slice(0, -'.md'.length);
      return parseAgentFile({ path: entry.path, source: entry.source, fileStem, file: read });
    },
  });
  if (parsed === undefined) return;
  scan.problems.push(...parsed.problems);
  if (parsed.agent !== undefined) keepFirst(scan.agents, parsed.agent, { kind: 'agent', report });
}

/** `parse()`, or what the cache kept of the file when its stat is the same as at its last read. */
function readThroughCache(
  scan: Scan,
  options: {
    /** Where the file was found, relative to the workdir. */
    path: string;
    location: Location & { type: 'inside' };
    parse: () => Promise<ParsedCatalogFile | undefined>;
  },
): Promise<ParsedCatalogFile | undefined> {
  const { path, location, parse } = options;
  if (scan.cache === undefined) return parse();
  // The stat was taken before the read (locateInWorkdir): what the read saw is at least as new.
  return scan.cache.get({ key: `${location.canonical}\0${path}`, info: location.info, parse });
}

async function readCatalogFile(canonical: string, report: ProblemReport): Promise<CappedFile | undefined> {
  try {
    return await readCappedFile(canonical, MAX_CATALOG_FILE_BYTES);
  } catch (error) {
    report('error', `the file could not be read: ${(error as Error).message}`);
    return undefined;
  }
}

/** The first of a name wins: `.agents` is read before `.claude`, folders in name order. */
function keepFirst<T extends { name: string; path: string; source: CatalogSource }>(
  found: Map<string, T>,
  entry: T,
  options: { kind: string; report: ProblemReport },
): void {
  const winner = found.get(entry.name);
  if (winner === undefined) {
    found.set(entry.name, entry);
    return;
  }
  const why =
    winner.source === entry.source ? 'it comes first in name order' : `${winner.source} wins over ${entry.source}`;
  options.report(
    'warning',
    `${options.kind} "${entry.name}" of ${entry.path} is ignored: ${winner.path} has the same name and ${why}`,
  );
}

function isUsableFolder(
  location: Location,
  options: { what: string; report: ProblemReport },
): location is Location & { type: 'inside' } {
  if (location.type === 'missing') return false;
  if (location.type !== 'inside') {
    refuse(location, options);
    return false;
  }
  if (!location.info.isDirectory()) {
    options.report('error', `${options.what} is not a folder`);
    return false;
  }
  return true;
}

function refuse(
  location: Location & { type: 'outside' | 'unreadable' },
  options: { what: string; report: ProblemReport },
): void {
  options.report(
    'error',
    location.type === 'outside'
      ? `refused: ${options.what} leads outside the workdir (to ${location.canonical})`
      : `${options.what} could not be read: ${location.message}`,
  );
}

/** At most MAX_PROBLEMS, the last one saying how many more there were. */
function capProblems(problems: CatalogProblem[]): CatalogProblem[] {
  if (problems.length <= MAX_PROBLEMS) return problems;
  const kept = problems.slice(0, MAX_PROBLEMS - 1);
  const first = problems[MAX_PROBLEMS - 1];
  kept.push({
    path: first?.path ?? '.',
    severity: 'warning',
    message: `${problems.length - kept.length} more problems, from this file on, are not listed`,
  });
  return kept;
}

function identity(info: Stats): string {
  return `${info.dev}:${info.ino}`;
}

function byName(a: { name: string }, b: { name: string }): number {
  return compare(a.name, b.name);
}

/** Code-unit order, the same on every machine (localeCompare depends on the locale). */
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

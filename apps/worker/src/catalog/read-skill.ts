import { readdir } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import {
  MAX_CATALOG_FILE_BYTES,
  MAX_SKILL_FILES,
  MolfError,
  type ProjectCatalog,
  type SkillContent,
} from '@molf/protocol';
import { locateInWorkdir } from './locate-in-workdir.ts';
import { readCappedFile } from './read-capped-file.ts';
import { splitFrontmatter } from './split-frontmatter.ts';

/** Folders looked through for a skill's files, so a skill holding a huge tree answers quickly. */
const MAX_FOLDERS_VISITED = 1_000;
const MAX_FOLDER_DEPTH = 16;

/**
 * Answers `skills/read`: the named skill's SKILL.md, read again now (at the path of the latest
 * snapshot) so the content is the file's latest, its body after the frontmatter, and the other files
 * of its folder. Throws a MolfError naming the available skills when the name is unknown.
 */
export async function readSkill(options: {
  /** The canonical workdir. */
  workdir: string;
  catalog: ProjectCatalog;
  name: string;
  /** Files read_file may not read without a person (the call's read rules). Default: none. */
  isReadDenied?: ((forms: readonly string[]) => boolean) | undefined;
}): Promise<SkillContent> {
  const { workdir, catalog, name } = options;
  const isReadDenied = options.isReadDenied ?? (() => false);
  const skill = catalog.skills.find((candidate) => candidate.name === name);
  if (skill === undefined) {
    const names = catalog.skills.map((candidate) => candidate.name);
    throw new MolfError(
      'not_found',
      names.length === 0
        ? `no skill named "${name}": this project has no skills`
        : `no skill named "${name}"; the available skills are: ${names.join(', ')}`.slice(0, 3_000),
    );
  }
  const location = await locateInWorkdir(workdir, join(workdir, skill.path));
  switch (location.type) {
    case 'missing':
      throw new MolfError('not_found', `the skill "${name}" is gone: ${skill.path} no longer exists`);
    case 'outside':
      throw new MolfError('forbidden', `refused: ${skill.path} now leads outside the workdir`);
    case 'unreadable':
      throw new MolfError('internal', `${skill.path} could not be read: ${location.message}`);
    case 'inside':
      break;
    default:
      location satisfies never;
  }
  // Where it was found and where it leads: a SKILL.md linked to a denied file must not hand it over.
  if (isReadDenied([skill.path, relative(workdir, location.canonical), location.canonical])) {
    throw new MolfError(
      'forbidden',
      `refused: ${skill.path} leads to ${relative(workdir, location.canonical)}, which the read_file rules do not let be read`,
    );
  }
  const file = await readCappedFile(location.canonical, MAX_CATALOG_FILE_BYTES);
  const split = splitFrontmatter(file.text);
  if (split.type === 'unclosed') {
    throw new MolfError('invalid_input', `the frontmatter of ${skill.path} is not closed by a \`---\` line`);
  }
  // The folder as found, not the SKILL.md's target's: a SKILL.md may be a link to a file elsewhere.
  const folder = dirname(skill.path);
  const canonicalFolder = await locateInWorkdir(workdir, join(workdir, folder));
  const files =
    canonicalFolder.type === 'inside'
      ? await listSkillFiles({ workdir, folder, canonicalFolder: canonicalFolder.canonical, isReadDenied })
      : { files: [], more: false };
  return {
    name,
    path: skill.path,
    content: split.body.trim(),
    truncated: file.truncated,
    files: files.files,
    ...(files.more ? { moreFiles: true } : {}),
  };
}

/**
 * The files under a skill's folder but its SKILL.md, relative to the workdir, sorted; at most
 * MAX_SKILL_FILES. A link is listed when it leads to a file inside the workdir, never followed
 * into a folder (a link to an ancestor would loop).
 */
async function listSkillFiles(options: {
  workdir: string;
  /** The skill's folder, relative to the workdir. */
  folder: string;
  canonicalFolder: string;
  isReadDenied: (forms: readonly string[]) => boolean;
}): Promise<{ files: string[]; more: boolean }> {
  const files: string[] = [];
  const pending = [{ absolute: options.canonicalFolder, relative: options.folder, depth: 0 }];
  let visited = 0;
  let more = false;
  for (let folder = pending.pop(); folder !== undefined; folder = pending.pop()) {
    if (++visited > MAX_FOLDERS_VISITED) {
      more = true;
      break;
    }
    const dirents = await readdir(folder.absolute, { withFileTypes: true }).catch(() => []);
    // Reversed onto the stack, so folders are looked through in name order.
    const subfolders: typeof pending = [];
    for (const dirent of dirents.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      const shown = join(folder.relative, dirent.name);
      if (folder.depth === 0 && dirent.name === 'SKILL.md') continue;
      if (dirent.isDirectory()) {
        if (folder.depth < MAX_FOLDER_DEPTH) {
          subfolders.push({ absolute: join(folder.absolute, dirent.name), relative: shown, depth: folder.depth + 1 });
        } else more = true;
        continue;
      }
      const forms = [shown, join(folder.absolute, dirent.name)];
      if (dirent.isSymbolicLink()) {
        const target = await locateInWorkdir(options.workdir, join(folder.absolute, dirent.name));
        if (target.type !== 'inside' || !target.info.isFile()) continue;
        forms.push(relative(options.workdir, target.canonical), target.canonical);
      } else if (!dirent.isFile()) continue;
      if (options.isReadDenied(forms)) continue;
      if (files.length === MAX_SKILL_FILES) {
        more = true;
        break;
      }
      files.push(shown);
    }
    if (more && files.length === MAX_SKILL_FILES) break;
    pending.push(...subfolders.reverse());
  }
  return { files: files.sort(), more };
}

import { type CatalogProblem, type CatalogSource, type SkillInfo, SkillInfoSchema } from '@molf/protocol';
import {
  createProblemReport,
  describeType,
  isRecord,
  type ProblemReport,
  parseCatalogMarkdown,
  readCatalogName,
  readDescription,
  readToolNames,
} from './parse-catalog-markdown.ts';
import type { CappedFile } from './read-capped-file.ts';

/** Frontmatter keys of the Agent Skills format; the rest is kept in `extra`. */
const KNOWN_KEYS = new Set(['name', 'description', 'license', 'compatibility', 'metadata', 'allowed-tools']);
const MAX_TEXT_FIELD = 1_024;
const MAX_ALLOWED_TOOLS = 100;

/**
 * A SKILL.md's entry in the catalog (without its body, which `skills/read` reads when the skill is
 * used), or none when the file is skipped; every problem names the file.
 */
export async function parseSkillFile(options: {
  /** The SKILL.md, relative to the workdir. */
  path: string;
  source: CatalogSource;
  /** The skill's folder name: the default name, and what the name should match. */
  folderName: string;
  file: CappedFile;
}): Promise<{ skill: SkillInfo | undefined; problems: CatalogProblem[] }> {
  const problems: CatalogProblem[] = [];
  const report = createProblemReport(options.path, problems);
  const skill = await toSkillInfo(options, report);
  return { skill, problems };
}

async function toSkillInfo(
  options: Parameters<typeof parseSkillFile>[0],
  report: ProblemReport,
): Promise<SkillInfo | undefined> {
  const parsed = await parseCatalogMarkdown({
    file: options.file,
    kind: 'skill',
    cutMeans: 'the skill tool gets its content cut there',
    report,
  });
  if (parsed === undefined) return undefined;
  const { frontmatter } = parsed;
  const name = readCatalogName({ frontmatter, fallback: options.folderName, kind: 'skill', report });
  if (name === undefined) return undefined;
  if (name !== options.folderName) {
    report(
      'warning',
      `the skill's name "${name}" differs from its folder's "${options.folderName}"; it is offered as "${name}"`,
    );
  }
  const description = readDescription({ frontmatter, kind: 'skill', report });
  if (description === undefined) return undefined;

  const skill: SkillInfo = { name, description, path: options.path, source: options.source };
  for (const key of ['license', 'compatibility'] as const) {
    const value = frontmatter[key];
    if (value === undefined || value === null) continue;
    if (typeof value !== 'string')
      report('warning', `\`${key}\` left out: it must be text, not ${describeType(value)}`);
    else if (value.length > MAX_TEXT_FIELD)
      report('warning', `\`${key}\` left out: longer than ${MAX_TEXT_FIELD} characters`);
    else skill[key] = value;
  }
  if (frontmatter.metadata !== undefined && frontmatter.metadata !== null) {
    if (isRecord(frontmatter.metadata)) skill.metadata = frontmatter.metadata as SkillInfo['metadata'];
    else report('warning', `\`metadata\` left out: it must be a mapping, not ${describeType(frontmatter.metadata)}`);
  }
  const allowedTools = readToolNames({
    raw: frontmatter['allowed-tools'],
    key: 'allowed-tools',
    separators: /[\s,]+/,
    max: MAX_ALLOWED_TOOLS,
    report,
  });
  if (Array.isArray(allowedTools)) skill.allowedTools = allowedTools;
  else if (allowedTools !== undefined) report('warning', `${allowedTools.invalid}; left out`);
  const extra = Object.fromEntries(Object.entries(frontmatter).filter(([key]) => !KNOWN_KEYS.has(key)));
  if (Object.keys(extra).length > 0) skill.extra = extra as SkillInfo['extra'];

  // The last word is the protocol's: a skill the server would refuse must not sink the whole snapshot.
  const checked = SkillInfoSchema.safeParse(skill);
  if (!checked.success) {
    const issue = checked.error.issues[0];
    report('error', `skill skipped: ${issue?.path.join('.') || 'entry'}: ${issue?.message ?? 'invalid'}`);
    return undefined;
  }
  return checked.data;
}

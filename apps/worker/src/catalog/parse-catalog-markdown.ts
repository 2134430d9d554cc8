import {
  CATALOG_NAME_PATTERN,
  type CatalogProblem,
  MAX_CATALOG_DESCRIPTION,
  MAX_CATALOG_FILE_BYTES,
} from '@molf/protocol';
import { type Frontmatter, safeParseFrontmatter } from './parse-frontmatter.ts';
import type { CappedFile } from './read-capped-file.ts';
import { splitFrontmatter } from './split-frontmatter.ts';

/** Longest problem message the protocol carries. */
const MAX_PROBLEM_MESSAGE = 2_000;

/** Collects the problems of one file, each naming it. */
export type ProblemReport = (severity: CatalogProblem['severity'], message: string) => void;

export function createProblemReport(path: string, problems: CatalogProblem[]): ProblemReport {
  return (severity, message) => problems.push({ path, severity, message: message.slice(0, MAX_PROBLEM_MESSAGE) });
}

/**
 * The frontmatter and body of a SKILL.md or agent file, or undefined when the file is skipped (the
 * reason reported): no frontmatter (hence no description), frontmatter that never closes, or YAML
 * that doesn't parse. A file cut at the cap is reported as a warning and read as far as it goes.
 */
export async function parseCatalogMarkdown(options: {
  file: CappedFile;
  /** `skill` or `agent`, for messages. */
  kind: string;
  /** What the cut means for this kind of file. */
  cutMeans: string;
  report: ProblemReport;
}): Promise<{ frontmatter: Frontmatter; body: string } | undefined> {
  const { file, kind, report } = options;
  if (file.truncated) {
    report(
      'warning',
      `the file is ${file.size} bytes, more than the ${MAX_CATALOG_FILE_BYTES} read; only its first ` +
        `${MAX_CATALOG_FILE_BYTES} bytes are used (${options.cutMeans})`,
    );
  }
  const split = splitFrontmatter(file.text);
  switch (split.type) {
    case 'none':
      report(
        'warning',
        `${kind} skipped: the file has no frontmatter, so no description ` +
          '(start it with a `---` block holding at least `description:`)',
      );
      return undefined;
    case 'unclosed':
      report(
        'error',
        file.truncated
          ? `${kind} skipped: the frontmatter does not close (\`---\`) within the first ${MAX_CATALOG_FILE_BYTES} bytes`
          : `${kind} skipped: the frontmatter opened by \`---\` is never closed by another \`---\` line`,
      );
      return undefined;
    case 'found': {
      const parsed = await safeParseFrontmatter(split.yaml);
      if (!parsed.ok) {
        report('error', `${kind} skipped: ${parsed.error}`);
        return undefined;
      }
      return { frontmatter: parsed.value, body: split.body };
    }
    default:
      split satisfies never;
      return undefined;
  }
}

/** The frontmatter's `name`, else the folder's or file's; undefined (reported) when it is not a valid name. */
export function readCatalogName(options: {
  frontmatter: Frontmatter;
  fallback: string;
  kind: string;
  report: ProblemReport;
}): string | undefined {
  const { frontmatter, fallback, kind, report } = options;
  const raw = frontmatter.name ?? fallback;
  const shown = typeof raw === 'string' ? `"${raw.slice(0, 100)}"` : JSON.stringify(raw).slice(0, 100);
  if (typeof raw !== 'string' || raw.length > 64 || !CATALOG_NAME_PATTERN.test(raw)) {
    report(
      'error',
      `${kind} skipped: the name ${shown}${frontmatter.name === undefined ? ' (from the file name)' : ''} is not ` +
        'valid: a name is 1–64 lowercase letters, digits and single hyphens',
    );
    return undefined;
  }
  return raw;
}

/** The required `description`, trimmed; undefined (reported) when it is missing, not text or too long. */
export function readDescription(options: {
  frontmatter: Frontmatter;
  kind: string;
  report: ProblemReport;
}): string | undefined {
  const { frontmatter, kind, report } = options;
  const raw = frontmatter.description;
  if (raw === undefined || raw === null || (typeof raw === 'string' && raw.trim() === '')) {
    report('warning', `${kind} skipped: the frontmatter has no \`description\` (the model chooses by it)`);
    return undefined;
  }
  if (typeof raw !== 'string') {
    report('error', `${kind} skipped: \`description\` must be text, not ${describeType(raw)}`);
    return undefined;
  }
  const description = raw.trim();
  if (description.length > MAX_CATALOG_DESCRIPTION) {
    report(
      'error',
      `${kind} skipped: the description is ${description.length} characters, more than the ` +
        `${MAX_CATALOG_DESCRIPTION} allowed; shorten it`,
    );
    return undefined;
  }
  return description;
}

/**
 * A list of tool names written as a YAML list or as one string split at `separators`; undefined
 * when the key is absent, `{ invalid }` when it is neither. Entries that are not names (not text,
 * empty, longer than 128 characters) and those beyond `max` are left out and reported.
 */
export function readToolNames(options: {
  raw: unknown;
  key: string;
  separators: RegExp;
  max: number;
  report: ProblemReport;
}): string[] | { invalid: string } | undefined {
  const { raw, key, report } = options;
  if (raw === undefined || raw === null) return undefined;
  let entries: unknown[];
  if (typeof raw === 'string') entries = raw.split(options.separators);
  else if (Array.isArray(raw)) entries = raw;
  else return { invalid: `\`${key}\` must be a list of tool names or one string of them, not ${describeType(raw)}` };
  const names: string[] = [];
  let dropped = 0;
  for (const entry of entries) {
    const name = typeof entry === 'string' ? entry.trim() : undefined;
    if (name === '' && typeof raw === 'string') continue;
    if (name === undefined || name === '' || name.length > 128) dropped += 1;
    else names.push(name);
  }
  if (dropped > 0) {
    report('warning', `\`${key}\`: ${dropped} entries left out (each must be a tool name of 1–128 characters)`);
  }
  if (names.length > options.max) {
    report('warning', `\`${key}\` names ${names.length} tools; only the first ${options.max} are kept`);
    names.length = options.max;
  }
  return names;
}

/** Whether a value is a plain object (not a list): what `metadata` and `permission` must be. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  return `a ${typeof value}`;
}

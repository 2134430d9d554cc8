import { type AgentInfo, AgentInfoSchema, type CatalogProblem, type CatalogSource } from '@molf/protocol';
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

const MAX_AGENT_TOOLS = 200;
const MAX_MODEL_LENGTH = 256;
const MAX_STEPS = 1_000;

/**
 * An agent file's entry in the catalog, its body (trimmed) as the prompt, or none when the file is
 * skipped. What would run the agent with more than it asked for (tools, permissions, model or step
 * limit that can't be read) skips it with an error rather than dropping the field.
 */
export async function parseAgentFile(options: {
  /** The agent file, relative to the workdir. */
  path: string;
  source: CatalogSource;
  /** The file name without `.md`: the default name. */
  fileStem: string;
  file: CappedFile;
}): Promise<{ agent: AgentInfo | undefined; problems: CatalogProblem[] }> {
  const problems: CatalogProblem[] = [];
  const report = createProblemReport(options.path, problems);
  const agent = await toAgentInfo(options, report);
  return { agent, problems };
}

async function toAgentInfo(
  options: Parameters<typeof parseAgentFile>[0],
  report: ProblemReport,
): Promise<AgentInfo | undefined> {
  const parsed = await parseCatalogMarkdown({
    file: options.file,
    kind: 'agent',
    cutMeans: "the agent's prompt is cut there",
    report,
  });
  if (parsed === undefined) return undefined;
  const { frontmatter } = parsed;
  const name = readCatalogName({ frontmatter, fallback: options.fileStem, kind: 'agent', report });
  if (name === undefined) return undefined;
  const description = readDescription({ frontmatter, kind: 'agent', report });
  if (description === undefined) return undefined;

  const agent: AgentInfo = {
    name,
    description,
    path: options.path,
    source: options.source,
    prompt: parsed.body.trim(),
  };
  const tools = readToolNames({
    raw: frontmatter.tools,
    key: 'tools',
    separators: /,/,
    max: MAX_AGENT_TOOLS,
    report,
  });
  if (Array.isArray(tools)) agent.tools = tools;
  else if (tools !== undefined) return skip(report, tools.invalid);

  const { permission, model, maxSteps } = frontmatter;
  if (permission !== undefined && permission !== null) {
    if (!isRecord(permission)) {
      return skip(report, `\`permission\` must be a mapping of tool names to rules, not ${describeType(permission)}`);
    }
    // Kept as written: the server checks it against the language of permissions.jsonc.
    agent.permission = permission as AgentInfo['permission'];
  }
  if (model !== undefined && model !== null) {
    if (typeof model !== 'string' || model.trim() === '' || model.length > MAX_MODEL_LENGTH) {
      return skip(report, `\`model\` must be a \`provider/model\` name of at most ${MAX_MODEL_LENGTH} characters`);
    }
    agent.model = model.trim();
  }
  if (maxSteps !== undefined && maxSteps !== null) {
    if (typeof maxSteps !== 'number' || !Number.isInteger(maxSteps) || maxSteps < 1 || maxSteps > MAX_STEPS) {
      return skip(
        report,
        `\`maxSteps\` must be a whole number from 1 to ${MAX_STEPS}, not ${JSON.stringify(maxSteps)}`,
      );
    }
    agent.maxSteps = maxSteps;
  }

  // The last word is the protocol's: an agent the server would refuse must not sink the whole snapshot.
  const checked = AgentInfoSchema.safeParse(agent);
  if (!checked.success) {
    const issue = checked.error.issues[0];
    return skip(report, `${issue?.path.join('.') || 'entry'}: ${issue?.message ?? 'invalid'}`);
  }
  return checked.data;
}

function skip(report: ProblemReport, why: string): undefined {
  report('error', `agent skipped: ${why}`);
  return undefined;
}

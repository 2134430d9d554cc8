import type { ReadRule } from '@molf/permissions';
import {
  type SkillContent,
  type SkillInfo,
  type ToolDescriptor,
  type ToolResult,
  toErrorResult,
  type WorkerId,
} from '@molf/protocol';
import { z } from 'zod';
import type { JobDispatcher } from '../workers/job-dispatcher.ts';
import { describeNamedList, escapeXml } from './describe-named-list.ts';
import type { ServerTool } from './server-tool.ts';

export const SKILL_TOOL = 'skill';

/** How long the worker may take to read a SKILL.md. */
const READ_SKILL_TIMEOUT_MS = 15_000;

const skillArgs = z.strictObject({ name: z.string().min(1).max(64).describe('The name of the skill to load') });

const INTRODUCTION =
  'Loads a skill: instructions and know-how for a kind of task in this project, written by its people. ' +
  'When a task matches a skill below, load it before you start, then follow it. Only the names and ' +
  'descriptions are shown here; the tool returns the whole skill.';

/** The tool's description: a short introduction, then every skill's name and description. */
export function describeSkills(skills: readonly SkillInfo[]): string {
  return describeNamedList(INTRODUCTION, 'skill', skills);
}

function toDescriptor(skills: readonly SkillInfo[]): ToolDescriptor {
  return {
    name: SKILL_TOOL,
    description: describeSkills(skills),
    inputSchema: {
      type: 'object',
      properties: {
        name: { type: 'string', enum: skills.map((skill) => skill.name), description: 'The name of the skill to load' },
      },
      required: ['name'],
      additionalProperties: false,
    },
  };
}

/** What the model reads: the skill's content, the tools it expects, and the files beside it. */
export function formatSkill(content: SkillContent, info: SkillInfo | undefined): string {
  const parts = [`<skill name="${content.name}" path="${escapeXml(content.path)}">`, content.content];
  if (content.truncated) parts.push(`[This SKILL.md is longer than Molf reads; its end is missing.]`);
  parts.push('</skill>');
  if (info?.allowedTools !== undefined && info.allowedTools.length > 0) {
    parts.push(
      `This skill expects these tools: ${info.allowedTools.join(', ')}. (Listing them grants nothing: every call still passes the approval gate.)`,
    );
  }
  if (content.files.length > 0) {
    parts.push(
      "Files in the skill's folder (paths relative to the workdir; read them with read_file when the skill calls for them):",
      ...content.files.map((file) => `- ${file}`),
      ...(content.moreFiles === true ? ['- … (more files not listed)'] : []),
    );
  }
  return parts.join('\n');
}

/** Reads a skill of the worker as the `skill` tool returns it; a failure is a result. */
export async function loadSkill(
  dispatcher: JobDispatcher,
  options: {
    workerId: WorkerId;
    name: string;
    skills: readonly SkillInfo[];
    /** The read_file rules the worker applies to the SKILL.md and the files it lists. */
    readRules: ReadRule[];
    signal?: AbortSignal | undefined;
  },
): Promise<ToolResult> {
  const info = options.skills.find((skill) => skill.name === options.name);
  if (info === undefined) {
    const known = options.skills.map((skill) => skill.name).join(', ');
    return toErrorResult(
      'invalid_arguments',
      `There is no skill named "${options.name}". ${known === '' ? 'This worker has no skills.' : `The skills are: ${known}.`}`,
    );
  }
  const outcome = await dispatcher.request({
    workerId: options.workerId,
    request: { method: 'skills/read', params: { name: options.name, readRules: options.readRules } },
    timeoutMs: READ_SKILL_TIMEOUT_MS,
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  });
  if (!outcome.ok) {
    // The worker refuses a SKILL.md that leads to a file the read_file rules deny.
    const errorKind = outcome.message.includes('refused:') ? 'permission_denied' : outcome.errorKind;
    return toErrorResult(errorKind, `The skill "${options.name}" could not be read: ${outcome.message}`);
  }
  return { output: formatSkill(outcome.result, info) };
}

/**
 * `skill({ name })`: offered only where the worker has skills, its description listing them (only
 * these lines cost context until one is loaded); returns the skill's content, read from the worker.
 */
export function createSkillTool(options: {
  dispatcher: JobDispatcher;
  skills: (workerId: WorkerId) => readonly SkillInfo[];
  /** The worker's read_file rules, `~` expanded. */
  readRules: (workerId: WorkerId) => Promise<ReadRule[]>;
}): ServerTool<typeof skillArgs> {
  return {
    definition: {
      name: SKILL_TOOL,
      description: INTRODUCTION,
      args: skillArgs,
      defaultTimeoutMs: READ_SKILL_TIMEOUT_MS * 2,
    },
    offer({ registration }) {
      const skills = registration.catalog?.skills ?? [];
      return skills.length === 0 ? undefined : toDescriptor(skills);
    },
    async run({ name }, context) {
      return loadSkill(options.dispatcher, {
        workerId: context.workerId,
        name,
        skills: options.skills(context.workerId),
        readRules: await options.readRules(context.workerId),
        signal: context.signal,
      });
    },
  };
}

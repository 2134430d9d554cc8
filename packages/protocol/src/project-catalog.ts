import { z } from 'zod';
import { WorkerIdSchema } from './ids.ts';

/*
 * The skills and agents a worker finds in its project (`.agents/` and `.claude/`), sent to the server
 * as one versioned snapshot: at registration and after every change, so a reconnect or a lost message
 * never leaves the server with a mix of old and new.
 */

/** A skill or agent name: 1–64 lowercase letters, digits and single hyphens (the Agent Skills format). */
export const CATALOG_NAME_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
export const CatalogNameSchema = z
  .string()
  .min(1)
  .max(64)
  .regex(CATALOG_NAME_PATTERN, 'a name is 1–64 lowercase letters, digits and hyphens');

/** Longest description a skill or agent may have, in characters. */
export const MAX_CATALOG_DESCRIPTION = 1_024;
/** SKILL.md and agent files are read up to this many bytes; what is longer is cut and reported. */
export const MAX_CATALOG_FILE_BYTES = 256 * 1_024;
export const MAX_SKILLS = 500;
export const MAX_AGENTS = 200;
/** Files next to a SKILL.md that a skill's content lists. */
export const MAX_SKILL_FILES = 200;

/** Which folder a file came from: `.agents` wins over `.claude` when both hold the same name. */
export const CatalogSourceSchema = z.enum(['.agents', '.claude']);
export type CatalogSource = z.infer<typeof CatalogSourceSchema>;

const FrontmatterValueSchema = z.json();

export const SkillInfoSchema = z.object({
  name: CatalogNameSchema,
  description: z.string().min(1).max(MAX_CATALOG_DESCRIPTION),
  /** The SKILL.md, relative to the workdir. */
  path: z.string().min(1).max(4_096),
  source: CatalogSourceSchema,
  license: z.string().max(1_024).optional(),
  compatibility: z.string().max(1_024).optional(),
  metadata: z.record(z.string(), FrontmatterValueSchema).optional(),
  /** Tools the skill's instructions expect: shown to the model, never a grant. */
  allowedTools: z.array(z.string().max(128)).max(100).optional(),
  /** Other frontmatter keys, kept as written. */
  extra: z.record(z.string(), FrontmatterValueSchema).optional(),
});
export type SkillInfo = z.infer<typeof SkillInfoSchema>;

export const AgentInfoSchema = z.object({
  name: CatalogNameSchema,
  description: z.string().min(1).max(MAX_CATALOG_DESCRIPTION),
  /** The agent file, relative to the workdir. */
  path: z.string().min(1).max(4_096),
  source: CatalogSourceSchema,
  /** Allow-list of tool names; absent: every tool but `task`. */
  tools: z.array(z.string().min(1).max(128)).max(200).optional(),
  /**
   * Rules in the language of `permissions.jsonc` (`{ "tool": action | { pattern: action } }`), applied
   * on top of the worker's file: they can narrow what it allows, never widen it. Checked by the server.
   */
  permission: z.record(z.string(), FrontmatterValueSchema).optional(),
  /** `provider/model`; absent: the parent turn's model. */
  model: z.string().max(256).optional(),
  maxSteps: z.number().int().min(1).max(1_000).optional(),
  /** The body: the agent's system prompt. */
  prompt: z.string().max(MAX_CATALOG_FILE_BYTES),
});
export type AgentInfo = z.infer<typeof AgentInfoSchema>;

/** A file of the catalog that was skipped, cut or is suspicious, for the log and `molf workers`. */
export const CatalogProblemSchema = z.object({
  /** Relative to the workdir. */
  path: z.string().max(4_096),
  severity: z.enum(['warning', 'error']),
  message: z.string().max(2_000),
});
export type CatalogProblem = z.infer<typeof CatalogProblemSchema>;

/** Names must be unique within a list: the tools offer them as an enum. */
function uniqueNames(list: readonly { name: string }[], context: z.RefinementCtx, what: string): void {
  const seen = new Set<string>();
  for (const { name } of list) {
    if (seen.has(name)) context.addIssue({ code: 'custom', message: `two ${what} are named "${name}"` });
    seen.add(name);
  }
}

export const ProjectCatalogSchema = z
  .object({
    /** Grows with every snapshot a worker process sends; the server keeps only the newest. */
    version: z.number().int().nonnegative(),
    skills: z.array(SkillInfoSchema).max(MAX_SKILLS),
    agents: z.array(AgentInfoSchema).max(MAX_AGENTS),
    problems: z.array(CatalogProblemSchema).max(1_000),
  })
  .superRefine((catalog, context) => {
    uniqueNames(catalog.skills, context, 'skills');
    uniqueNames(catalog.agents, context, 'agents');
  });
export type ProjectCatalog = z.infer<typeof ProjectCatalogSchema>;

export const EMPTY_PROJECT_CATALOG: ProjectCatalog = { version: 0, skills: [], agents: [], problems: [] };

/** `worker.catalog`: a registered worker's skills or agents changed. */
export const WorkerCatalogInputSchema = z.object({
  workerId: WorkerIdSchema,
  /** The registration this snapshot belongs to: a snapshot of a replaced process is dropped. */
  instanceId: z.uuid(),
  catalog: ProjectCatalogSchema,
});
export type WorkerCatalogInput = z.infer<typeof WorkerCatalogInputSchema>;

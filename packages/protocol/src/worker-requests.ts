import { z } from 'zod';
import { FILE_CHANGE_TOOLS, FileChangePreviewSchema } from './file-diff.ts';
import { ToolCallIdSchema, WorkerIdSchema } from './ids.ts';
import { MAX_CATALOG_FILE_BYTES } from './project-catalog.ts';
import { ToolOutputPageSchema, ToolOutputRangeSchema } from './tool-output.ts';
import { ToolErrorKindSchema } from './tool-result.ts';

/*
 * Requests the server sends a worker besides tool calls, each of its own kind (keyed by method, as
 * MCP keys its requests) with its own params and result schema. They travel on the job stream and
 * are never offered to the model.
 */

/** Paths one resolve request takes; patterns, trees and visible trees: each at most MAX_RESOLVE_LIST. */
export const MAX_RESOLVE_PATHS = 256;
export const MAX_RESOLVE_LIST = 64;

/**
 * A read_file rule as a worker applies it (in order, `~` expanded). Rules of a subagent carry
 * `layer: 'agent'`: that list is judged apart and its deny wins.
 */
export const ReadRuleSchema = z.object({
  pattern: z.string().max(4_096),
  action: z.enum(['allow', 'deny', 'ask']),
  layer: z.literal('agent').optional(),
});

/**
 * `paths/resolve`: the gate asks, before judging a call, where its paths really lead. The worker
 * answers with the canonical forms of each path (symlinks followed), authoritative first, so rules
 * apply to where a path really leads.
 */
export const ResolvePathsParamsSchema = z.object({
  /** Paths as written (a file tool's path, files a shell line reads or writes). */
  paths: z.array(z.string().max(4_096)).max(MAX_RESOLVE_PATHS),
  /** Glob patterns a shell would expand (`cat .e*`): answered with the forms of every file they name. */
  patterns: z.array(z.string().max(4_096)).max(MAX_RESOLVE_LIST).optional(),
  /**
   * Directories a shell line reads whole (`grep -r KEY .`): answered with the directory's forms and
   * those of the first file under it that `readRules` deny; none when it can't be looked through
   * within bounds.
   */
  trees: z.array(z.string().max(4_096)).max(MAX_RESOLVE_LIST).optional(),
  /** The same for directories read without their hidden files (`rg KEY`, `git grep KEY`). */
  visibleTrees: z.array(z.string().max(4_096)).max(MAX_RESOLVE_LIST).optional(),
  /** The read_file rules trees are looked through with. Default none (nothing is denied). */
  readRules: z.array(ReadRuleSchema).max(2_000).optional(),
});
export type ResolvePathsParams = z.infer<typeof ResolvePathsParamsSchema>;

/** Forms one answer entry may list: a pattern names up to a thousand files, each with two forms. */
const MAX_FORMS_PER_ENTRY = 4_096;
const PathFormsSchema = z.object({
  given: z.string().max(4_096),
  forms: z.array(z.string().max(4_096)).max(MAX_FORMS_PER_ENTRY),
});
export const ResolvedPathsSchema = z.object({
  paths: z.array(PathFormsSchema).max(MAX_RESOLVE_PATHS + MAX_RESOLVE_LIST),
  trees: z
    .array(PathFormsSchema)
    .max(2 * MAX_RESOLVE_LIST)
    .optional(),
});
export type ResolvedPaths = z.infer<typeof ResolvedPathsSchema>;

/**
 * The resolve request for a call's path arguments (a path, a pattern the shell expands, or a
 * directory read whole or without its hidden files), at most what one request takes of each kind;
 * the rest is `unsent`, to be counted as paths the worker could not resolve (so the call asks).
 */
export function toResolvePathsParams(wanted: readonly { path: string; pattern: boolean; tree?: 'all' | 'visible' }[]): {
  params: ResolvePathsParams;
  unsent: { paths: string[]; trees: string[] };
} {
  const of = (pick: (entry: (typeof wanted)[number]) => boolean) => wanted.filter(pick).map((entry) => entry.path);
  const paths = of((entry) => !entry.pattern && entry.tree === undefined);
  const patterns = of((entry) => entry.pattern);
  const trees = of((entry) => !entry.pattern && entry.tree === 'all');
  const visibleTrees = of((entry) => !entry.pattern && entry.tree === 'visible');
  return {
    params: {
      paths: paths.slice(0, MAX_RESOLVE_PATHS),
      patterns: patterns.slice(0, MAX_RESOLVE_LIST),
      ...(trees.length === 0 ? {} : { trees: trees.slice(0, MAX_RESOLVE_LIST) }),
      ...(visibleTrees.length === 0 ? {} : { visibleTrees: visibleTrees.slice(0, MAX_RESOLVE_LIST) }),
    },
    unsent: {
      paths: [...paths.slice(MAX_RESOLVE_PATHS), ...patterns.slice(MAX_RESOLVE_LIST)],
      trees: [...trees.slice(MAX_RESOLVE_LIST), ...visibleTrees.slice(MAX_RESOLVE_LIST)],
    },
  };
}

/**
 * `instructions/read`: the agent loop asks for the project instructions (AGENTS.md, else
 * CLAUDE.md) at the workdir root, or, with `forPath`, those in the directories below the root down
 * to that file's directory (nested instructions, shown after `read_file`).
 */
export const ReadInstructionsParamsSchema = z.object({ forPath: z.string().max(4_096).optional() });
export type ReadInstructionsParams = z.infer<typeof ReadInstructionsParamsSchema>;
export const InstructionsSchema = z.object({
  files: z.array(z.object({ path: z.string().max(4_096), text: z.string(), truncated: z.boolean() })).max(256),
});
export type Instructions = z.infer<typeof InstructionsSchema>;

/**
 * `skills/read`: the `skill` tool asks for a skill's content when it runs (the snapshot carries only
 * names and descriptions). The worker reads the SKILL.md again, so the content is the file's latest.
 */
export const ReadSkillParamsSchema = z.object({
  name: z.string().min(1).max(64),
  /**
   * The read_file rules of the call: a SKILL.md that leads to a file they deny or ask about is refused,
   * and such files are left out of the skill's list (a skill must not read what read_file may not).
   */
  readRules: z.array(ReadRuleSchema).max(2_000).optional(),
});
export type ReadSkillParams = z.infer<typeof ReadSkillParamsSchema>;
export const SkillContentSchema = z.object({
  name: z.string().max(64),
  /** The SKILL.md, relative to the workdir. */
  path: z.string().max(4_096),
  /** The body after the frontmatter (the file is read up to MAX_CATALOG_FILE_BYTES). */
  content: z.string().max(MAX_CATALOG_FILE_BYTES),
  /** The file was longer than the cap and its end is missing. */
  truncated: z.boolean(),
  /** Files in the skill's folder besides SKILL.md, relative to the workdir (at most MAX_SKILL_FILES). */
  files: z.array(z.string().max(4_096)).max(1_000),
  /** More files than listed. */
  moreFiles: z.boolean().optional(),
});
export type SkillContent = z.infer<typeof SkillContentSchema>;

/**
 * `tool-output/read`: a client asks for the whole output of a call whose result was cut. The worker
 * reads a page of `.molf/tool-output/{outputId}.txt` only (a regular file, never through a link) —
 * Molf's own record of a call the person already allowed, so the approval gate is not asked.
 */
export const ReadToolOutputParamsSchema = ToolOutputRangeSchema.extend({ outputId: ToolCallIdSchema });
export type ReadToolOutputParams = z.infer<typeof ReadToolOutputParamsSchema>;

/**
 * `file-change/preview`: before a person is asked about an edit_file or write_file call, the gate
 * asks for what it would change. The worker runs the tool's own checks and edit in memory (writes
 * nothing) and answers with the diff against the file as it is now, or with a note saying why
 * there is none: the tool's own refusal (`oldString was not found`…), a binary or too large file.
 */
export const PreviewFileChangeParamsSchema = z.object({
  tool: z.enum(FILE_CHANGE_TOOLS),
  /** The call's arguments, checked by the tool's own schema. */
  args: z.record(z.string(), z.unknown()),
  /** The call's session: the tool refuses a file changed since that session read it. */
  sessionId: z.string().max(128).optional(),
  /**
   * The read_file rules of the call: a file they deny or ask about is not shown (a note says so),
   * so that a preview never shows what read_file may not read. Default none (nothing is hidden).
   */
  readRules: z.array(ReadRuleSchema).max(2_000).optional(),
});
export type PreviewFileChangeParams = z.infer<typeof PreviewFileChangeParamsSchema>;

/** One request as it travels on the job stream. */
export const WorkerRequestSchema = z.discriminatedUnion('method', [
  z.object({ method: z.literal('paths/resolve'), params: ResolvePathsParamsSchema }),
  z.object({ method: z.literal('instructions/read'), params: ReadInstructionsParamsSchema }),
  /** The workdir's HEARTBEAT.md, the checklist of a worker's heartbeat job (none when absent). */
  z.object({ method: z.literal('heartbeat/read'), params: z.object({}) }),
  z.object({ method: z.literal('skills/read'), params: ReadSkillParamsSchema }),
  z.object({ method: z.literal('tool-output/read'), params: ReadToolOutputParamsSchema }),
  z.object({ method: z.literal('file-change/preview'), params: PreviewFileChangeParamsSchema }),
]);
export type WorkerRequest = z.infer<typeof WorkerRequestSchema>;
export type WorkerRequestMethod = WorkerRequest['method'];

/** Each method's result schema: the one place a request's answer is defined. */
export const WORKER_REQUEST_RESULTS = {
  'paths/resolve': ResolvedPathsSchema,
  'instructions/read': InstructionsSchema,
  'heartbeat/read': InstructionsSchema,
  'skills/read': SkillContentSchema,
  'tool-output/read': ToolOutputPageSchema,
  'file-change/preview': FileChangePreviewSchema,
} as const satisfies Record<WorkerRequestMethod, z.ZodType>;
export type WorkerRequestResult<M extends WorkerRequestMethod> = z.infer<(typeof WORKER_REQUEST_RESULTS)[M]>;

/** A worker's answer: the method's result, or why it could not answer. */
export const WorkerResponseSchema = z.union([
  z.object({ method: z.literal('paths/resolve'), result: ResolvedPathsSchema }),
  z.object({ method: z.literal('instructions/read'), result: InstructionsSchema }),
  z.object({ method: z.literal('heartbeat/read'), result: InstructionsSchema }),
  z.object({ method: z.literal('skills/read'), result: SkillContentSchema }),
  z.object({ method: z.literal('tool-output/read'), result: ToolOutputPageSchema }),
  z.object({ method: z.literal('file-change/preview'), result: FileChangePreviewSchema }),
  z.object({
    error: z.object({
      message: z.string().max(4_000),
      /** What kind of failure, for the server to tell its caller (`not_found`…). Default `internal`. */
      kind: ToolErrorKindSchema.optional(),
    }),
  }),
]);
export type WorkerResponse = z.infer<typeof WorkerResponseSchema>;

/** `worker.respond`: a worker answers one request. Request ids share the tool call ids' alphabet. */
export const WorkerResponseInputSchema = z.object({
  workerId: WorkerIdSchema,
  requestId: ToolCallIdSchema,
  response: WorkerResponseSchema,
});
export type WorkerResponseInput = z.infer<typeof WorkerResponseInputSchema>;

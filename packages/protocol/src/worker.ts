import { z } from 'zod';
import { PermissionsProblemSchema } from './approvals.ts';
import { ToolCallIdSchema, WorkerIdSchema } from './ids.ts';
import { oneLineName } from './one-line-name.ts';
import { AgentInfoSchema, CatalogProblemSchema, ProjectCatalogSchema, SkillInfoSchema } from './project-catalog.ts';
import { ToolDescriptorSchema } from './tool-definitions.ts';
import { ToolResultSchema } from './tool-result.ts';
import { ReadRuleSchema, WorkerRequestSchema } from './worker-requests.ts';

/**
 * A worker's OS sandbox for shell commands and stdio MCP servers, as the worker found it at start:
 * `active` is whether commands really run in it (mode `on` or `required` and a passed self-test).
 */
export const WorkerSandboxSchema = z.object({
  mode: z.enum(['off', 'on', 'required']),
  active: z.boolean(),
  /** Whether sandboxed commands have the network. */
  network: z.boolean(),
  /** Whether stdio MCP servers run in the sandbox too. */
  mcp: z.boolean(),
  /** The start-up self-test (absent in mode `off`). */
  selfTest: z
    .object({
      ok: z.boolean(),
      /** Why it failed, for people. */
      failed: z.string().max(1_000).optional(),
      checks: z
        .array(z.object({ name: z.string().max(64), ok: z.boolean(), detail: z.string().max(500).optional() }))
        .max(32),
    })
    .optional(),
});
export type WorkerSandbox = z.infer<typeof WorkerSandboxSchema>;

/** Longest reason an MCP server's state carries; a worker cuts longer ones. */
export const MAX_MCP_REASON_CHARS = 1_000;
/** MCP servers one worker reports; a `.mcp.json` naming more is reported up to this many. */
export const MAX_MCP_SERVERS = 256;

/**
 * Where one MCP server of a worker's `.mcp.json` stands: `connecting` (starting, or again after a
 * drop), `connected`, `offline` (its start failed or it dropped; retried with backoff — `reason`
 * says why), `awaiting_approval` (new or changed: starts once a person allows it), `denied` (not
 * started until its definition changes), `disabled` (`"enabled": false`), `invalid` (cannot start as
 * written, e.g. a variable it needs is not set: `reason` says which; not started until the file changes).
 */
export const McpServerStatusSchema = z.enum([
  'connecting',
  'connected',
  'offline',
  'awaiting_approval',
  'denied',
  'disabled',
  'invalid',
]);
export type McpServerStatus = z.infer<typeof McpServerStatusSchema>;

export const McpServerInfoSchema = z.object({
  /** As named in `.mcp.json`. */
  name: z.string().min(1).max(128),
  type: z.enum(['stdio', 'http']),
  status: McpServerStatusSchema,
  /** Why it is offline (the last error), denied or invalid. */
  reason: z.string().max(MAX_MCP_REASON_CHARS).optional(),
  /**
   * Its tools as the model is offered them (`{server}_{tool}`, sanitised); kept while the server
   * reconnects, so a name never moves to another server's tool.
   */
  tools: z.array(z.string().max(64)).max(1_000),
});
export type McpServerInfo = z.infer<typeof McpServerInfoSchema>;

/**
 * A snapshot of a worker's MCP servers, sent whole at every change. `version` grows with each
 * snapshot of one worker process, so one that crossed a newer one on the way is dropped.
 */
export const WorkerMcpServersSchema = z.object({
  version: z.number().int().nonnegative(),
  servers: z.array(McpServerInfoSchema).max(MAX_MCP_SERVERS),
});
export type WorkerMcpServers = z.infer<typeof WorkerMcpServersSchema>;

/** `worker.mcpServers`: a registered worker's MCP servers changed state (or tools). */
export const WorkerMcpServersInputSchema = z.object({
  workerId: WorkerIdSchema,
  /** The registration this snapshot belongs to: a snapshot of a replaced process is dropped. */
  instanceId: z.uuid(),
  mcp: WorkerMcpServersSchema,
});
export type WorkerMcpServersInput = z.infer<typeof WorkerMcpServersInputSchema>;

/** What a worker tells the server about itself when it (re-)registers. */
export const WorkerRegistrationSchema = z.object({
  workerId: WorkerIdSchema,
  /**
   * Random per worker process. A new instance for a known worker id means the old process is
   * gone, so the jobs it held will never report back.
   */
  instanceId: z.uuid(),
  name: oneLineName('a worker name', 128),
  workdir: z.string().min(1).max(4_096),
  tools: z.array(ToolDescriptorSchema).max(1_000),
  /**
   * The names in `tools` the worker offers itself (not from an MCP server); the set is fixed for a
   * worker process. Absent from workers that predate it: then every tool counts as built-in.
   */
  builtinTools: z.array(z.string().max(64)).max(1_000).optional(),
  version: z.string().max(64),
  /** The worker user's home directory: `~` in permission rules and shell lines means this. */
  home: z.string().max(4_096).optional(),
  /** The worker's sandbox and its self-test; absent from workers that predate it. */
  sandbox: WorkerSandboxSchema.optional(),
  /** The skills and agents found in the workdir; absent from workers that predate them. */
  catalog: ProjectCatalogSchema.optional(),
  /** Its MCP servers and their state; absent from workers that predate it. */
  mcp: WorkerMcpServersSchema.optional(),
});
export type WorkerRegistration = z.infer<typeof WorkerRegistrationSchema>;

/** Input of the worker's job subscription; subscribing is registering. */
export const WorkerJobsInputSchema = z.object({
  registration: WorkerRegistrationSchema,
  /** Set by the tRPC client on reconnect: the id of the last message this worker received. */
  lastEventId: z.string().max(128).nullish(),
});
export type WorkerJobsInput = z.infer<typeof WorkerJobsInputSchema>;

/** One tool call for a worker to run. */
export const JobSchema = z.object({
  toolCallId: ToolCallIdSchema,
  toolName: z.string().min(1).max(128),
  args: z.record(z.string(), z.unknown()),
  /** The call's own deadline; the worker aborts the tool when it passes. */
  timeoutMs: z.number().int().positive(),
  /** The session the call belongs to, for per-session state on the worker (e.g. which files were read). */
  sessionId: z.string().min(1).max(128).optional(),
  /**
   * The read_file rules (in order, `~` expanded) a tool that reads many files must apply to each
   * one: grep over a directory skips the files these deny; edit_file and write_file show no diff
   * of a file these deny.
   */
  readRules: z.array(ReadRuleSchema).max(2_000).optional(),
  /**
   * Where each path argument led (absolute, canonical) when the approval gate judged the call. The
   * worker refuses the call if a path now leads elsewhere: a link swapped while the call waited for
   * a person must not redirect an approved write.
   */
  approvedPaths: z.record(z.string().max(4_096), z.string().max(4_096)).optional(),
});
export type Job = z.infer<typeof JobSchema>;

/** What flows on the job subscription, in order. */
export const JobMessageSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('registered'), serverVersion: z.string() }),
  /** Another worker process registered with this worker id; this stream ends. */
  z.object({ type: z.literal('replaced') }),
  z.object({ type: z.literal('call'), job: JobSchema }),
  /** A request of the server's own (see worker-requests.ts), answered with `worker.respond`. */
  z.object({
    type: z.literal('request'),
    requestId: ToolCallIdSchema,
    /** The worker gives up answering after this; the server stops waiting a little later. */
    timeoutMs: z.number().int().positive(),
    request: WorkerRequestSchema,
  }),
  /** Cancels a tool call (requests are not cancelled: they are short, and a late answer is dropped). */
  z.object({
    type: z.literal('cancel'),
    toolCallId: ToolCallIdSchema,
    reason: z.enum(['timeout', 'aborted']),
  }),
]);
export type JobMessage = z.infer<typeof JobMessageSchema>;

export const JobResultInputSchema = z.object({
  workerId: WorkerIdSchema,
  toolCallId: ToolCallIdSchema,
  result: ToolResultSchema,
});
export type JobResultInput = z.infer<typeof JobResultInputSchema>;

export const JobResultAckSchema = z.object({
  /** False when the server no longer waits for this call (it timed out or was cancelled). */
  accepted: z.boolean(),
});
export type JobResultAck = z.infer<typeof JobResultAckSchema>;

export const WorkerStateSchema = z.enum(['online', 'offline']);
export type WorkerState = z.infer<typeof WorkerStateSchema>;

/** A registered worker as clients see it. */
export const WorkerInfoSchema = z.object({
  workerId: WorkerIdSchema,
  name: z.string(),
  workdir: z.string(),
  /** Every tool the worker offers the model: its built-in ones and its MCP servers'. */
  tools: z.array(z.string()),
  /** The names in `tools` that are the worker's own, not an MCP server's. */
  builtinTools: z.array(z.string()),
  version: z.string(),
  state: WorkerStateSchema,
  /** ISO time of the last registration. */
  connectedAt: z.string(),
  /** ISO time the worker was last seen connected. */
  lastSeenAt: z.string(),
  /** The sandbox the worker reported at its last registration. */
  sandbox: WorkerSandboxSchema.optional(),
  /** What the worker offers besides its tools, while it is online. */
  catalog: z
    .object({
      skills: z.array(SkillInfoSchema),
      /** Agents the task tool can run: built-in and the project's, without their prompts. */
      agents: z.array(
        AgentInfoSchema.omit({ prompt: true }).partial({ path: true, source: true }).extend({ builtin: z.boolean() }),
      ),
      /** Files skipped or cut, and agents naming tools or models that do not exist. */
      problems: z.array(CatalogProblemSchema),
    })
    .optional(),
  /** The MCP servers of its `.mcp.json`, each with its state and tools, while it is online. */
  mcpServers: z.array(McpServerInfoSchema).optional(),
  /**
   * Set while its `permissions.jsonc` does not parse: where and why, and what the gate uses meanwhile.
   * Read when the worker connects and at each change of the file; `approvals.events` follows it live
   * (`permissions.invalid`, `permissions.valid`).
   */
  permissionsProblem: PermissionsProblemSchema.optional(),
});
export type WorkerInfo = z.infer<typeof WorkerInfoSchema>;

/** `workers.events`: one worker's changes, or every worker's. */
export const WorkerEventsInputSchema = z.object({ workerId: WorkerIdSchema.optional() });

/**
 * A worker as it is after a change, whole (as `workers.list` gives it): it came online
 * (`worker.connected`), went offline (`worker.disconnected`), or something it shows changed
 * (`worker.changed`: its MCP servers' states, its tools, skills and agents, its permissions file's
 * problem). A subscription starts with a `worker.changed` for each worker it follows.
 */
export const WorkerEventSchema = z.object({
  type: z.enum(['worker.connected', 'worker.disconnected', 'worker.changed']),
  worker: WorkerInfoSchema,
});
export type WorkerEvent = z.infer<typeof WorkerEventSchema>;

/** A registered worker's tool set changed (its MCP servers' tools came, went or changed). */
export const WorkerToolsInputSchema = z.object({
  workerId: WorkerIdSchema,
  tools: z.array(ToolDescriptorSchema).max(1_000),
});

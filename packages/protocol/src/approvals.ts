import { z } from 'zod';
import { FileChangePreviewSchema } from './file-diff.ts';
import { WorkerIdSchema } from './ids.ts';

/** A session's id: no control characters (PostgreSQL's text refuses NUL; a log line breaks on the others). */
export const SessionIdSchema = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[^\p{Cc}]+$/u, 'a session id holds no control characters');

/**
 * How far an approval reaches: this call, the rest of the session, or saved for the worker; or
 * `edits` ("accept edits for this session", only where an approval's `offersAcceptEdits`): this
 * call and the session's later edit_file and write_file calls inside the workdir that the rules
 * ask about only through a catch-all rule (a deny still denies, a rule naming the file still asks).
 */
export const ApprovalScopeSchema = z.enum(['once', 'session', 'always', 'edits']);
export type ApprovalScope = z.infer<typeof ApprovalScopeSchema>;

export const SubjectVerdictInfoSchema = z.object({
  kind: z.enum(['path', 'pattern', 'command', 'name', 'tool']),
  label: z.string(),
  decision: z.enum(['allow', 'deny', 'ask']),
  /** The rule that decided this subject, as people read it; absent when none matched. */
  rule: z.string().optional(),
});
export type SubjectVerdictInfo = z.infer<typeof SubjectVerdictInfoSchema>;

/**
 * What waits for a person: a tool call of a session, or the start of an MCP server that is new or
 * changed in the worker's `.mcp.json` (tool `mcp.server`, belonging to no session).
 */
export const ApprovalKindSchema = z.enum(['tool_call', 'mcp_server']);
export type ApprovalKind = z.infer<typeof ApprovalKindSchema>;

/** A tool call waiting for a person. Server state: replayed to every client that subscribes. */
export const ApprovalSchema = z.object({
  approvalId: z.string(),
  /** Absent from servers older than this field: a tool call. */
  kind: ApprovalKindSchema.optional(),
  /**
   * The session of the call. An `mcp_server` approval belongs to its worker, not to a session:
   * its session id is `worker:<workerId>`, and answers name that id like any other.
   */
  sessionId: SessionIdSchema,
  workerId: WorkerIdSchema,
  toolCallId: z.string(),
  /**
   * The call's id in the session's messages and events (`tool-call.started`), when it differs from
   * `toolCallId` (the gate's own id): a client marks the call that waits with it.
   */
  sessionToolCallId: z.string().optional(),
  tool: z.string(),
  args: z.record(z.string(), z.unknown()),
  /** Set when a subagent made the call: its agent and the session whose `task` call runs it. */
  subagent: z.object({ agent: z.string(), parentSessionId: SessionIdSchema }).optional(),
  /** Why it asks. */
  reason: z.string(),
  subjects: z.array(SubjectVerdictInfoSchema),
  /** Exactly what "session" or "always" would add as allow rules; null when "always" is not offered. */
  alwaysPatterns: z.array(z.string()).nullable(),
  /**
   * Why "session"/"always" offer no wider pattern (only the exact command, or nothing): one
   * sentence, set when the call runs a destructive command (`rm -rf`, `git push --force`…).
   */
  alwaysNote: z.string().optional(),
  /**
   * For an edit_file or write_file call: the change as a unified diff computed on the worker
   * against the file as it is now, or a note saying why there is none (the tool would refuse the
   * call, a binary or too large file, the worker did not answer in time). Absent for other tools.
   */
  preview: FileChangePreviewSchema.optional(),
  /** Whether the answer scope `edits` ("accept edits for this session") is offered. Absent: false. */
  offersAcceptEdits: z.boolean().optional(),
  requestedAt: z.string(),
});
export type Approval = z.infer<typeof ApprovalSchema>;

export const ApprovalOutcomeSchema = z.enum(['approved', 'denied', 'cancelled']);
export type ApprovalOutcome = z.infer<typeof ApprovalOutcomeSchema>;

export const PermissionsProblemSchema = z.object({
  workerId: WorkerIdSchema,
  file: z.string(),
  line: z.number().int(),
  column: z.number().int(),
  message: z.string(),
  /** What the gate uses meanwhile. */
  fallback: z.enum(['last_good_rules', 'ask_everything']),
});
export type PermissionsProblem = z.infer<typeof PermissionsProblemSchema>;

export const ApprovalEventSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('approval.requested'), approval: ApprovalSchema }),
  z.object({
    type: z.literal('approval.resolved'),
    approvalId: z.string(),
    sessionId: SessionIdSchema,
    outcome: ApprovalOutcomeSchema,
    scope: ApprovalScopeSchema.optional(),
    /**
     * Who decided: `client:<credential id>`, `link:<nonce prefix>` (a notification's one-time link),
     * `rule` (a cascade after "always"), or `server`.
     */
    by: z.string(),
    reason: z.string().optional(),
  }),
  z.object({ type: z.literal('permissions.invalid'), problem: PermissionsProblemSchema }),
  /** A worker's permissions file parses again after a `permissions.invalid`. */
  z.object({ type: z.literal('permissions.valid'), workerId: WorkerIdSchema }),
]);
export type ApprovalEvent = z.infer<typeof ApprovalEventSchema>;

/** How far ahead an "always" grant may expire. */
export const MAX_GRANT_DAYS = 366;

/** The longest pattern a person may write into an answer (the file itself takes longer ones). */
export const MAX_ANSWER_PATTERN_CHARS = 1000;

export const ApproveInputSchema = z
  .object({
    sessionId: SessionIdSchema,
    approvalId: z.string().min(1).max(256),
    scope: ApprovalScopeSchema.default('once'),
    /**
     * The allow rules to add instead of the approval's `alwaysPatterns`, as the person edited them:
     * for `session` and `always` only (and only where "always" is offered). Each must be a pattern
     * `permissions.jsonc` takes. The call is approved even if they do not cover it. Default: the
     * approval's `alwaysPatterns`.
     */
    patterns: z.array(z.string().min(1).max(MAX_ANSWER_PATTERN_CHARS)).min(1).max(16).optional(),
    /**
     * When the rules saved by `always` stop applying: an ISO 8601 date and time with `Z` or an
     * offset, later than now and at most {@link MAX_GRANT_DAYS} days ahead (checked by the server
     * on its clock). Only with scope `always`. Default: no expiry.
     */
    expiresAt: z.iso.datetime({ offset: true }).optional(),
  })
  .superRefine((input, context) => {
    if (input.patterns !== undefined && (input.scope === 'once' || input.scope === 'edits')) {
      context.addIssue({
        code: 'custom',
        path: ['patterns'],
        message: `patterns are added as rules only with scope "session" or "always", not "${input.scope}"`,
      });
    }
    const seen = new Set<string>();
    for (const [index, pattern] of (input.patterns ?? []).entries()) {
      if (seen.has(pattern)) {
        context.addIssue({
          code: 'custom',
          path: ['patterns', index],
          message: `the pattern "${pattern}" is given twice`,
        });
      }
      seen.add(pattern);
    }
    if (input.expiresAt !== undefined && input.scope !== 'always') {
      context.addIssue({
        code: 'custom',
        path: ['expiresAt'],
        message: 'an expiry applies only to rules saved with scope "always"',
      });
    }
  });
export type ApproveInput = z.infer<typeof ApproveInputSchema>;

export const DenyInputSchema = z.object({
  sessionId: SessionIdSchema,
  approvalId: z.string().min(1).max(256),
  /** Reaches the model as the tool result. */
  feedback: z.string().max(10_000).optional(),
});
export type DenyInput = z.infer<typeof DenyInputSchema>;

export const ApprovalAnswerSchema = z.object({
  /** False when the approval was already answered, cancelled or never existed. */
  applied: z.boolean(),
});

export const ApprovalEventsInputSchema = z.object({
  sessionId: SessionIdSchema.optional(),
  workerId: WorkerIdSchema.optional(),
});

export const PermissionsFileInfoSchema = z.object({
  workerId: WorkerIdSchema,
  path: z.string(),
  text: z.string(),
  /** Identifies this text; pass it back to `permissions.write` so that a concurrent change is not overwritten. */
  version: z.string(),
  /** Set when the file on disk does not parse; the gate then uses `problem.fallback`. */
  problem: PermissionsProblemSchema.optional(),
});
export type PermissionsFileInfo = z.infer<typeof PermissionsFileInfoSchema>;

export const PermissionsWriteInputSchema = z.object({
  workerId: WorkerIdSchema,
  text: z.string().max(1024 * 1024),
  /** The `version` the edit started from; the write is refused (`conflict`) if the file changed since. */
  baseVersion: z.string().max(128).optional(),
});

export const PermissionsExplainInputSchema = z.object({
  workerId: WorkerIdSchema,
  tool: z.string().min(1).max(128),
  args: z.record(z.string(), z.unknown()),
});

export const PermissionExplanationSchema = z.object({
  decision: z.enum(['allow', 'deny', 'ask']),
  /** The deciding rule, as people read it, or why it asks without one. */
  reason: z.string(),
  subjects: z.array(SubjectVerdictInfoSchema),
  problems: z.array(z.string()),
  alwaysPatterns: z.array(z.string()).nullable(),
  /** Why "always" offers only the exact command, or nothing (see `Approval.alwaysNote`). */
  alwaysNote: z.string().optional(),
});
export type PermissionExplanation = z.infer<typeof PermissionExplanationSchema>;

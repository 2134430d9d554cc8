import { z } from 'zod';

/**
 * Tool definitions live here once: the worker validates arguments with `args`, the server
 * offers `toToolDescriptor(def)` to the model, clients render from the same source.
 */
export type ToolDefinition<Args extends z.ZodType = z.ZodType> = {
  name: string;
  description: string;
  args: Args;
  /** Default deadline of one call when its arguments don't set one, in milliseconds. */
  defaultTimeoutMs: number;
  /** The call's own deadline, read from its (validated) arguments, if the tool has one. */
  timeoutFromArgs?: (args: z.infer<Args>) => number | undefined;
  /** The JSON schema to offer as is (tools defined elsewhere, e.g. by an MCP server); default: from `args`. */
  inputSchema?: Record<string, unknown>;
};

/** The wire form of a tool: what a worker registers and what the model is offered. */
export const ToolDescriptorSchema = z.object({
  name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'a tool name is 1–64 characters of A–Z, a–z, 0–9, _ or -'),
  description: z.string().max(8_192),
  inputSchema: z.record(z.string(), z.unknown()),
});
export type ToolDescriptor = z.infer<typeof ToolDescriptorSchema>;

export function toToolDescriptor(definition: ToolDefinition): ToolDescriptor {
  return {
    name: definition.name,
    description: definition.description,
    inputSchema:
      definition.inputSchema ?? (z.toJSONSchema(definition.args, { io: 'input' }) as Record<string, unknown>),
  };
}

/** Default tool-call deadline, as in the reference: 120 s. */
export const DEFAULT_TOOL_TIMEOUT_MS = 120_000;
/** Upper bound for any per-call timeout a model may ask for: 30 minutes. */
export const MAX_TOOL_TIMEOUT_MS = 30 * 60_000;

const timeoutMs = z
  .number()
  .int()
  .positive()
  .max(MAX_TOOL_TIMEOUT_MS)
  .describe(`Timeout in milliseconds (default ${DEFAULT_TOOL_TIMEOUT_MS}, at most ${MAX_TOOL_TIMEOUT_MS})`);

export const shellExecArgs = z.strictObject({
  command: z.string().min(1).describe('Shell command to execute'),
  cwd: z.string().optional().describe('Working directory for the command (default: the worker workdir)'),
  timeout: timeoutMs.optional(),
});

export const readFileArgs = z.strictObject({
  path: z.string().min(1).describe('Absolute or relative path to the file'),
  startLine: z.number().int().positive().optional().describe('First line to read (1-indexed, inclusive)'),
  endLine: z.number().int().positive().optional().describe('Last line to read (1-indexed, inclusive)'),
});

export const writeFileArgs = z.strictObject({
  path: z.string().min(1).describe('Absolute or relative path to the file'),
  content: z.string().describe('Content to write'),
  createDirectories: z.boolean().optional().describe('Create parent directories if they do not exist (default false)'),
  overwrite: z
    .boolean()
    .optional()
    .describe('Replace the file if it exists (default true); false refuses to touch an existing file'),
});

const editOperation = z.strictObject({
  oldString: z.string().describe('Exact text to find'),
  newString: z.string().describe('Replacement text'),
  replaceAll: z
    .boolean()
    .optional()
    .describe('Replace all occurrences instead of requiring a unique match (default false)'),
});

export const editFileArgs = z
  .strictObject({
    path: z.string().min(1).describe('Absolute or relative path to the file'),
    oldString: z.string().optional().describe('Exact text to find (required unless edits is given)'),
    newString: z.string().optional().describe('Replacement text (required unless edits is given)'),
    replaceAll: z
      .boolean()
      .optional()
      .describe('Replace all occurrences instead of requiring a unique match (default false)'),
    edits: z
      .array(editOperation)
      .min(1)
      .max(100)
      .optional()
      .describe('Several edits applied in order, all or nothing; instead of oldString/newString'),
  })
  .refine((args) => (args.edits === undefined) === (args.oldString !== undefined && args.newString !== undefined), {
    message: 'send either oldString and newString, or edits (a list of {oldString, newString}), not both',
  });

export const globArgs = z.strictObject({
  pattern: z.string().min(1).describe('Glob pattern, e.g. **/*.ts or src/**/*.js'),
  path: z.string().optional().describe('Directory to search in (default: the worker workdir)'),
});

export const grepArgs = z.strictObject({
  pattern: z.string().min(1).describe('Regular expression to search for'),
  path: z.string().optional().describe('File or directory to search in (default: the worker workdir)'),
  include: z.string().optional().describe('File glob filter, e.g. *.ts or *.{js,jsx}'),
});

/**
 * A diagnostic tool: returns its text, optionally after a delay that a cancel interrupts.
 * It proves the server↔worker link end to end and is what the link benchmark runs.
 */
export const echoArgs = z.strictObject({
  text: z.string().describe('Text to return unchanged'),
  delayMs: z
    .number()
    .int()
    .nonnegative()
    .max(MAX_TOOL_TIMEOUT_MS)
    .optional()
    .describe('Wait this long before answering (default 0); a cancel ends the wait'),
});

function define<Args extends z.ZodType>(definition: ToolDefinition<Args>): ToolDefinition<Args> {
  return definition;
}

export const toolDefinitions = {
  shell_exec: define({
    name: 'shell_exec',
    description: 'Execute a shell command and return combined stdout/stderr and the exit code.',
    args: shellExecArgs,
    defaultTimeoutMs: DEFAULT_TOOL_TIMEOUT_MS,
    timeoutFromArgs: (args) => args.timeout,
  }),
  read_file: define({
    name: 'read_file',
    description: 'Read the contents of a file, optionally a range of lines.',
    args: readFileArgs,
    defaultTimeoutMs: DEFAULT_TOOL_TIMEOUT_MS,
  }),
  write_file: define({
    name: 'write_file',
    description: 'Write content to a file, creating or overwriting it.',
    args: writeFileArgs,
    defaultTimeoutMs: DEFAULT_TOOL_TIMEOUT_MS,
  }),
  edit_file: define({
    name: 'edit_file',
    description: 'Edit a file by replacing an exact string match.',
    args: editFileArgs,
    defaultTimeoutMs: DEFAULT_TOOL_TIMEOUT_MS,
  }),
  glob: define({
    name: 'glob',
    description: 'Find files matching a glob pattern, newest first.',
    args: globArgs,
    defaultTimeoutMs: DEFAULT_TOOL_TIMEOUT_MS,
  }),
  grep: define({
    name: 'grep',
    description: 'Search file contents with a regular expression.',
    args: grepArgs,
    defaultTimeoutMs: DEFAULT_TOOL_TIMEOUT_MS,
  }),
  echo: define({
    name: 'echo',
    description: 'Return the given text unchanged (diagnostic).',
    args: echoArgs,
    defaultTimeoutMs: DEFAULT_TOOL_TIMEOUT_MS,
  }),
} as const;

export type BuiltinToolName = keyof typeof toolDefinitions;

/**
 * The deadline of one call: the tool's own timeout argument when it has one (e.g.
 * `shell_exec.timeout`), else the tool's default. Unknown tools (MCP) get the default.
 */
export function resolveCallTimeout(toolName: string, args: Record<string, unknown>): number {
  const definition = (toolDefinitions as Record<string, ToolDefinition>)[toolName];
  if (definition === undefined) return DEFAULT_TOOL_TIMEOUT_MS;
  const parsed = definition.args.safeParse(args);
  const fromArgs = parsed.success ? definition.timeoutFromArgs?.(parsed.data) : undefined;
  return fromArgs ?? definition.defaultTimeoutMs;
}

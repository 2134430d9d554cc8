import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSilentLogger, type Logger } from '@molf/logging';
import type { ToolCallId, ToolResult } from '@molf/protocol';
import { prepareSandbox, type SandboxConfig } from '../sandbox/index.ts';
import { createReadTracker, type ReadTracker } from './read-tracker.ts';
import { createPathPolicy, type PathPolicy } from './resolve-tool-path.ts';
import type { ToolHandler } from './tool-handler.ts';

type RunOptions = {
  signal?: AbortSignal;
  toolCallId?: string;
  sessionId?: string;
  logger?: Logger;
  /** The read_file rules' verdict the tool gets (see ToolContext). Default: none denied. */
  isReadDenied?: (forms: readonly string[]) => boolean;
};

/**
 * A temp workdir (canonical) and a way to run a tool in it as the worker would, with argument
 * validation and one read tracker for the box; removed on dispose.
 */
export async function createToolSandbox(
  options: {
    requireRead?: boolean;
    /** Run commands in the OS sandbox with this policy (mode `required`: the self-test must pass). */
    sandbox?: Omit<SandboxConfig, 'mode'> & { home?: string };
  } = {},
): Promise<
  AsyncDisposable & {
    workdir: string;
    /** The box's path policy and read tracker, for code that runs beside the tools (previews). */
    paths: PathPolicy;
    reads: ReadTracker;
    run: (tool: ToolHandler, args: unknown, options?: RunOptions) => Promise<ToolResult>;
  }
> {
  const workdir = await realpath(await mkdtemp(join(tmpdir(), 'molf-tool-')));
  const { home, ...sandboxConfig } = options.sandbox ?? {};
  const sandbox =
    options.sandbox === undefined
      ? undefined
      : (
          await prepareSandbox({
            config: { ...sandboxConfig, mode: 'required' },
            workdir,
            env: process.env,
            ...(home === undefined ? {} : { home }),
          })
        ).runner;
  const paths = await createPathPolicy({ workdir });
  const reads = createReadTracker(options);
  let calls = 0;
  return {
    workdir,
    paths,
    reads,
    async run(tool, args, runOptions = {}) {
      const parsed = tool.definition.args.safeParse(args);
      if (!parsed.success) throw new Error(`test sent invalid arguments: ${parsed.error.message}`);
      calls += 1;
      return tool.run(parsed.data, {
        toolCallId: (runOptions.toolCallId ?? `test_${calls}`) as ToolCallId,
        workdir,
        paths,
        sessionId: runOptions.sessionId,
        reads,
        signal: runOptions.signal ?? new AbortController().signal,
        ...(sandbox === undefined ? {} : { sandbox }),
        ...(runOptions.isReadDenied === undefined ? {} : { isReadDenied: runOptions.isReadDenied }),
        logger: runOptions.logger ?? createSilentLogger(),
      });
    },
    [Symbol.asyncDispose]: () => rm(workdir, { recursive: true, force: true }),
  };
}

import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSilentLogger } from '@molf/logging';
import type { ToolCallId, ToolResult } from '@molf/protocol';
import { createPathPolicy } from './resolve-tool-path.ts';
import type { ToolHandler } from './tool-handler.ts';

/**
 * A temp workdir (canonical) and a way to run a tool in it exactly as the worker would, with
 * validation; removed on dispose.
 */
export async function createToolSandbox(): Promise<
  AsyncDisposable & {
    workdir: string;
    run: (
      tool: ToolHandler,
      args: unknown,
      options?: { signal?: AbortSignal; toolCallId?: string },
    ) => Promise<ToolResult>;
  }
> {
  const workdir = await realpath(await mkdtemp(join(tmpdir(), 'molf-tool-')));
  const paths = await createPathPolicy({ workdir });
  let calls = 0;
  return {
    workdir,
    async run(tool, args, options = {}) {
      const parsed = tool.definition.args.safeParse(args);
      if (!parsed.success) throw new Error(`test sent invalid arguments: ${parsed.error.message}`);
      calls += 1;
      return tool.run(parsed.data, {
        toolCallId: (options.toolCallId ?? `test_${calls}`) as ToolCallId,
        workdir,
        paths,
        signal: options.signal ?? new AbortController().signal,
        logger: createSilentLogger(),
      });
    },
    [Symbol.asyncDispose]: () => rm(workdir, { recursive: true, force: true }),
  };
}

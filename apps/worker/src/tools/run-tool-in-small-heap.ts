import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { ToolResult } from '@molf/protocol';

/** The worker package: the child resolves its imports from there. */
const WORKER_PACKAGE = fileURLToPath(new URL('../..', import.meta.url));

/**
 * Test helper: runs one tool call in a child node whose V8 heap is 64 MB, about 40 MB above what
 * loading a tool takes, so a tool that holds a huge line or file in memory dies there (out of
 * memory) instead of passing. Resolves with the result, or with the child's exit code and stderr.
 */
export function runToolInSmallHeap(options: {
  /** The tool's module, relative to this folder, e.g. `./read-file.ts`. */
  module: string;
  /** The export: the handler, or a factory of it when `factoryArguments` is given. */
  exportName: string;
  /** Arguments of the factory; default none (the export is the handler). */
  factoryArguments?: unknown[];
  workdir: string;
  args: Record<string, unknown>;
}): Promise<{ result: ToolResult | undefined; code: number | null; stderr: string }> {
  const script = `
    const [module, exportName, factoryArguments, workdir, args] = process.argv.slice(1);
    const exported = (await import(new URL(module, ${JSON.stringify(new URL('./', import.meta.url).href)})))[exportName];
    const tool = factoryArguments === 'none' ? exported : exported(...JSON.parse(factoryArguments));
    const { createPathPolicy } = await import('./src/tools/resolve-tool-path.ts');
    const { createReadTracker } = await import('./src/tools/read-tracker.ts');
    const { createSilentLogger } = await import('@molf/logging');
    const result = await tool.run(JSON.parse(args), {
      toolCallId: 'call_small_heap', workdir, paths: await createPathPolicy({ workdir }), sessionId: undefined,
      reads: createReadTracker(), signal: new AbortController().signal, logger: createSilentLogger(),
    });
    process.stdout.write(JSON.stringify(result));`;
  const argv = [
    options.module,
    options.exportName,
    options.factoryArguments === undefined ? 'none' : JSON.stringify(options.factoryArguments),
    options.workdir,
    JSON.stringify(options.args),
  ];
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      ['--max-old-space-size=64', '--input-type=module', '-e', script, ...argv],
      { cwd: WORKER_PACKAGE, maxBuffer: 10 * 1024 * 1024 },
      (_error, stdout, stderr) => {
        const result = child.exitCode === 0 ? (JSON.parse(stdout) as ToolResult) : undefined;
        resolve({ result, code: child.exitCode, stderr });
      },
    );
  });
}

import { randomUUID } from 'node:crypto';
import { createSilentLogger } from '@molf/logging';
import { MolfError, resolveCallTimeout, type ToolCallId } from '@molf/protocol';
import { builtinTools, createPathPolicy, createReadTracker, runToolCall, validateWorkdir } from '@molf/worker';
import { type Command, Option } from 'commander';

type ToolOptions = { workdir: string; json?: boolean };

export function registerToolCommand(program: Command): void {
  program
    .command('tool')
    .description('run one built-in tool in this process, exactly as a worker would, and print its result')
    .argument('<name>', `tool name: ${builtinTools.map((tool) => tool.definition.name).join(', ')}`)
    .argument('[args]', 'the arguments as a JSON object', '{}')
    .addOption(
      new Option('--workdir <dir>', 'the workdir the tool runs against').default(process.cwd(), 'current directory'),
    )
    .option('--json', 'print the whole result envelope as JSON')
    .action(runTool);
}

async function runTool(name: string, rawArgs: string, options: ToolOptions): Promise<void> {
  const handler = builtinTools.find((tool) => tool.definition.name === name);
  if (handler === undefined) {
    throw new MolfError(
      'tool_not_found',
      `no tool "${name}"; the built-ins are ${builtinTools.map((tool) => tool.definition.name).join(', ')}`,
    );
  }
  let args: unknown;
  try {
    args = JSON.parse(rawArgs);
  } catch (error) {
    throw new MolfError('invalid_input', `the arguments are not valid JSON: ${(error as Error).message}`);
  }
  if (typeof args !== 'object' || args === null || Array.isArray(args)) {
    throw new MolfError('invalid_input', 'the arguments must be a JSON object, e.g. \'{"path": "README.md"}\'');
  }
  const workdir = await validateWorkdir(options.workdir);
  const paths = await createPathPolicy({ workdir });
  const controller = new AbortController();
  const interrupt = () => controller.abort(new MolfError('cancelled', 'interrupted'));
  process.once('SIGINT', interrupt);
  const result = await runToolCall({
    job: {
      toolCallId: `cli_${randomUUID()}` as ToolCallId,
      toolName: name,
      args: args as Record<string, unknown>,
      timeoutMs: resolveCallTimeout(name, args as Record<string, unknown>),
    },
    tools: new Map([[name, handler]]),
    paths,
    reads: createReadTracker(),
    controller,
    logger: createSilentLogger(),
  });
  process.off('SIGINT', interrupt);

  if (options.json === true) {
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  } else {
    if (result.output !== '') process.stdout.write(`${result.output}\n`);
    for (const attachment of result.attachments ?? []) {
      process.stdout.write(
        `[attachment: ${attachment.mimeType}, ${attachment.size} bytes, ${attachment.path ?? ''}]\n`,
      );
    }
    if (result.error !== undefined) {
      process.stderr.write(`molf tool: ${name} failed (${result.meta?.errorKind ?? 'error'}): ${result.error}\n`);
    }
  }
  if (result.error !== undefined) process.exitCode = 1;
}

import { createLogger } from '@molf/logging';
import { MolfError } from '@molf/protocol';
import { builtinTools, startMcpManager, validateWorkdir } from '@molf/worker';
import { type Command, Option } from 'commander';
import { registerMcpTrustCommand } from './mcp-trust.ts';

type McpOptions = { workdir: string; json?: boolean };

async function withManager<T>(
  options: McpOptions,
  task: (manager: Awaited<ReturnType<typeof startMcpManager>>) => Promise<T>,
): Promise<T> {
  const workdir = await validateWorkdir(options.workdir);
  // Server problems (stderr, failed connections) are shown on stderr; stdout is for the answer.
  const logger = await createLogger({ name: 'mcp', level: 'warn', console: 'pretty', destination: process.stderr });
  const manager = await startMcpManager({
    workdir,
    env: process.env,
    logger,
    reserved: builtinTools.map((tool) => tool.definition.name),
    onToolsChanged: () => {},
  });
  try {
    await manager.ready;
    return await task(manager);
  } finally {
    await manager.close();
  }
}

const workdirOption = () =>
  new Option('--workdir <dir>', 'the project whose .mcp.json is used').default(process.cwd(), 'current directory');

export function registerMcpCommand(program: Command): void {
  const mcp = program
    .command('mcp')
    .description("the MCP servers of a project's .mcp.json, as a worker would run them");
  registerMcpTrustCommand(mcp);

  mcp
    .command('list')
    .description('start every enabled server, then show its state (connected/offline and why) and its tools')
    .addOption(workdirOption())
    .option('--json', 'print JSON')
    .action(async (options: McpOptions) => {
      await withManager(options, async (manager) => {
        const servers = manager.servers();
        const tools = manager
          .handlers()
          .map((handler) => ({ name: handler.definition.name, description: handler.definition.description }));
        if (options.json === true) {
          process.stdout.write(`${JSON.stringify({ servers, tools }, null, 2)}\n`);
          return;
        }
        if (servers.length === 0) {
          process.stdout.write('no MCP servers (no .mcp.json, or it names none)\n');
          return;
        }
        for (const server of servers) {
          process.stdout.write(
            `${server.name} (${server.type}): ${server.status}${server.reason === undefined ? '' : ` — ${server.reason}`}\n`,
          );
          for (const tool of tools.filter((candidate) => candidate.description.startsWith(`[${server.name}] `))) {
            process.stdout.write(
              `  ${tool.name}  ${tool.description.slice(server.name.length + 3, server.name.length + 103)}\n`,
            );
          }
        }
      });
    });

  mcp
    .command('call')
    .description('call one tool of one server by hand and print its result (the gate does not apply: you are the user)')
    .argument('<server>', 'server name in .mcp.json')
    .argument('<tool>', "the tool's own name (as the server lists it)")
    .argument('[args]', 'arguments as a JSON object', '{}')
    .addOption(workdirOption())
    .option('--json', 'print the whole result envelope')
    .action(async (server: string, tool: string, rawArgs: string, options: McpOptions) => {
      let args: unknown;
      try {
        args = JSON.parse(rawArgs);
      } catch (error) {
        throw new MolfError('invalid_input', `the arguments are not valid JSON: ${(error as Error).message}`);
      }
      if (typeof args !== 'object' || args === null || Array.isArray(args)) {
        throw new MolfError('invalid_input', 'the arguments must be a JSON object');
      }
      await withManager(options, async (manager) => {
        const state = manager.servers().find((candidate) => candidate.name === server);
        if (state === undefined) throw new MolfError('not_found', `no enabled server "${server}" in .mcp.json`);
        if (state.status !== 'connected')
          throw new MolfError('worker_offline', `${server} is ${state.status}: ${state.reason ?? ''}`);
        const handler = manager.handlerFor(server, tool);
        if (handler === undefined) {
          throw new MolfError('tool_not_found', `${server} has no tool "${tool}"; it has: ${state.tools.join(', ')}`);
        }
        const parsed = handler.definition.args.safeParse(args);
        if (!parsed.success)
          throw new MolfError('invalid_input', `invalid arguments for ${tool}: ${parsed.error.message}`);
        const result = await handler.run(parsed.data, { signal: new AbortController().signal } as never);
        if (options.json === true) process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
        else {
          if (result.output !== '') process.stdout.write(`${result.output}\n`);
          for (const attachment of result.attachments ?? [])
            process.stdout.write(`[attachment: ${attachment.mimeType}, ${attachment.size} bytes]\n`);
          if (result.error !== undefined) process.stderr.write(`molf mcp call: ${result.error}\n`);
        }
        if (result.error !== undefined) process.exitCode = 1;
      });
    });
}

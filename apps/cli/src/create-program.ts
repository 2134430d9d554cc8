import { Command } from 'commander';
import { registerChatCommand } from './commands/chat.ts';
import { registerMcpCommand } from './commands/mcp.ts';
import { registerPermissionsCommand } from './commands/permissions.ts';
import { registerRunCommand } from './commands/run.ts';
import { registerServerCommand } from './commands/server.ts';
import { registerTokenCommand } from './commands/token.ts';
import { registerToolCommand } from './commands/tool.ts';
import { registerUpCommand } from './commands/up.ts';
import { registerWorkerCommand } from './commands/worker.ts';
import { registerWorkersCommand } from './commands/workers.ts';

export const CLI_VERSION = '0.1.0';

export function createProgram(): Command {
  const program = new Command('molf')
    .description('Molf — a self-hosted server, workers and clients for running LLM coding agents')
    .version(CLI_VERSION)
    .showHelpAfterError()
    .addHelpText(
      'after',
      '\nStart everything for the current project with `molf up`; see `molf <command> --help` for each command.',
    );
  registerUpCommand(program);
  registerServerCommand(program);
  registerWorkerCommand(program);
  registerWorkersCommand(program);
  registerTokenCommand(program);
  registerToolCommand(program);
  registerPermissionsCommand(program);
  registerRunCommand(program);
  registerChatCommand(program);
  registerMcpCommand(program);
  return program;
}

import { type Command, Option } from 'commander';
import { runChat } from '../chat/run-chat.ts';
import { addStackOptions } from '../embedded-stack.ts';

export function registerChatCommand(program: Command): void {
  const command = program
    .command('chat')
    .description(
      'interactive session in the terminal: streaming answers, tool calls, approval prompts; without --server it ' +
        'starts a server and a worker on the current directory',
    )
    .addOption(new Option('--model <provider/model>', 'model for prompts').env('MOLF_MODEL'))
    .addOption(new Option('--session <id>', 'resume this session (its history is printed)').conflicts('continue'))
    .option('-c, --continue', 'resume the last session of this directory');
  addStackOptions(command).action(runChat);
}

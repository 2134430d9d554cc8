import { homedir } from 'node:os';
import { Command, Help } from 'commander';
import { CLI_VERSION } from './cli-version.ts';
import { cliVersionLine } from './cli-version-line.ts';
import { COMMANDS, findCommandEntry } from './command-table.ts';

export { CLI_VERSION };

/**
 * The `molf` program for `argv` (as in `process.argv`). Only the command `argv` names is loaded and
 * registered in full; without one (`--help`, `--version`, a typo) every command is listed from the
 * command table, so none of their modules is imported.
 */
export async function createProgram(argv: readonly string[]): Promise<Command> {
  const words = argv.slice(2);
  const program = new Command('molf')
    .description('Molf — a self-hosted server, workers and clients for running LLM coding agents')
    // The commit is looked up only when asked for: from the sources that costs three git runs.
    .version(words.includes('--version') || words.includes('-V') ? cliVersionLine() : CLI_VERSION)
    // Commander throws instead of exiting (main sets the exit code, 2 for a usage error); the
    // commands registered below inherit it.
    .exitOverride()
    .showHelpAfterError()
    .addHelpText(
      'after',
      '\nStart everything for the current project with `molf up`; see `molf <command> --help` for each command.',
    );
  const wanted = findCommandEntry(words);
  if (wanted !== undefined) {
    // Before any command runs, Molf's files are where it looks for them: `~/.molf` is moved to the
    // XDG places once (molf-home/), or kept for this run while an older Molf still uses it.
    program.hook('preAction', async (_program, action) => {
      const { prepareMolfHome } = await import('./molf-home/prepare-molf-home.ts');
      const dataDir = action.opts().dataDir;
      await prepareMolfHome({
        env: process.env,
        home: homedir(),
        ...(typeof dataDir === 'string' ? { dataDir } : {}),
        notice: (line) => process.stderr.write(`molf: ${line}\n`),
      });
    });
    (await wanted.load())(program);
    return program;
  }
  const terms = new Map(COMMANDS.map((entry) => [entry.name, entry.term]));
  // The listing shows each command as its module would register it ([options], arguments): the
  // unloaded commands have neither, so their terms come from the table.
  program.configureHelp({
    subcommandTerm: (command) => terms.get(command.name()) ?? new Help().subcommandTerm(command),
  });
  for (const entry of COMMANDS) program.command(entry.name).description(entry.description);
  return program;
}

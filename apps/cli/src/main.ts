#!/usr/bin/env node
import { CommanderError } from 'commander';
import { COMPLETE_COMMAND } from './completion/completion-script.ts';
import { createProgram } from './create-program.ts';
import { USAGE_EXIT_CODE } from './exit-codes.ts';
import { normalizeSandboxArguments } from './sandbox-options.ts';

// A reader that went away (`molf … | head`) does not want the rest: that ends the command quietly,
// not with a stack trace.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error;
  process.exit(typeof process.exitCode === 'number' ? process.exitCode : 0);
});

try {
  if (process.argv[2] === COMPLETE_COMMAND) {
    // Hidden from the listing, and its words are what the user typed, not options of molf: commander
    // must not parse them (`molf __complete --version` would print the version).
    const { completeWords, formatCompletions } = await import('./completion/complete-words.ts');
    process.stdout.write(formatCompletions(await completeWords(process.argv.slice(3))));
  } else {
    const argv = normalizeSandboxArguments(process.argv);
    await (await createProgram(argv)).parseAsync(argv);
  }
} catch (error) {
  if (error instanceof CommanderError) {
    // Commander has printed the usage error (or the help, the version: exit code 0) already.
    process.exitCode = error.exitCode === 1 ? USAGE_EXIT_CODE : error.exitCode;
  } else {
    // Imported here, not above: `molf --version` and `molf --help` load no schema library.
    const { isMolfError } = await import('@molf/protocol');
    process.stderr.write(`molf: ${isMolfError(error) ? error.message : (error as Error).message}\n`);
    if (!isMolfError(error) && process.env.MOLF_LOG_LEVEL === 'debug')
      process.stderr.write(`${(error as Error).stack}\n`);
    process.exitCode = 1;
  }
}

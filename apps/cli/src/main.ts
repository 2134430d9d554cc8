#!/usr/bin/env node
import { createProgram } from './create-program.ts';
import { normalizeSandboxArguments } from './sandbox-options.ts';

const argv = normalizeSandboxArguments(process.argv);
try {
  await (await createProgram(argv)).parseAsync(argv);
} catch (error) {
  // Imported here, not above: `molf --version` and `molf --help` load no schema library.
  const { isMolfError } = await import('@molf/protocol');
  process.stderr.write(`molf: ${isMolfError(error) ? error.message : (error as Error).message}\n`);
  if (!isMolfError(error) && process.env.MOLF_LOG_LEVEL === 'debug')
    process.stderr.write(`${(error as Error).stack}\n`);
  process.exitCode = 1;
}

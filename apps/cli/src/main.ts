#!/usr/bin/env node
import { isMolfError } from '@molf/protocol';
import { createProgram } from './create-program.ts';
import { normalizeSandboxArguments } from './sandbox-options.ts';

try {
  await createProgram().parseAsync(normalizeSandboxArguments(process.argv));
} catch (error) {
  process.stderr.write(`molf: ${isMolfError(error) ? error.message : (error as Error).message}\n`);
  if (!isMolfError(error) && process.env.MOLF_LOG_LEVEL === 'debug')
    process.stderr.write(`${(error as Error).stack}\n`);
  process.exitCode = 1;
}

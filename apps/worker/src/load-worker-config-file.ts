import { readFile, realpath } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { safeParseJsonc } from '@molf/permissions';
import { MolfError } from '@molf/protocol';
import { z } from 'zod';
import { type SandboxConfig, SandboxConfigFileSchema } from './sandbox/index.ts';

/** A worker's JSONC config file (`molf worker --config`, `MOLF_WORKER_CONFIG`). */
export const WorkerConfigFileSchema = z.strictObject({
  /** The OS sandbox of shell commands and stdio MCP servers. */
  sandbox: SandboxConfigFileSchema.optional(),
});

export type WorkerConfigFile = { sandbox?: SandboxConfig };

function isInside(parent: string, child: string): boolean {
  const path = relative(parent, child);
  return path === '' || (!path.startsWith('..') && !isAbsolute(path));
}

/**
 * Reads and validates a worker config file. Refused inside the workdir: the model can write there,
 * and this file decides the sandbox. Paths in it are `~/`-expanded and relative to the file's own
 * directory. Every problem is a `config_invalid` error naming the file and where (line and column
 * for syntax, the field otherwise).
 */
export async function loadWorkerConfigFile(
  path: string,
  options: { workdir: string; home?: string },
): Promise<WorkerConfigFile> {
  let canonical: string;
  let text: string;
  try {
    canonical = await realpath(resolve(path));
    text = await readFile(canonical, 'utf8');
  } catch (error) {
    throw new MolfError('config_invalid', `cannot read the worker config file ${path}: ${(error as Error).message}`);
  }
  if (isInside(options.workdir, canonical)) {
    throw new MolfError(
      'config_invalid',
      `the worker config file ${path} is inside the workdir ${options.workdir}, where the model can write: ` +
        'keep it outside (e.g. ~/.config/molf/worker.jsonc)',
    );
  }
  const read = safeParseJsonc(text);
  if (!read.ok) {
    const { line, column, code } = read.error;
    throw new MolfError('config_invalid', `${path}: line ${line}, column ${column}: invalid JSONC (${code})`);
  }
  const parsed = WorkerConfigFileSchema.safeParse(read.value ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new MolfError(
      'config_invalid',
      `${path}: ${issue?.path.length ? `"${issue.path.join('.')}"` : 'the file'}: ${issue?.message ?? 'invalid'}`,
    );
  }
  const home = options.home ?? homedir();
  const base = dirname(canonical);
  const absolute = (entry: string) =>
    entry === '~' ? home : entry.startsWith('~/') ? join(home, entry.slice(2)) : resolve(base, entry);
  const sandbox = parsed.data.sandbox;
  if (sandbox === undefined) return {};
  return {
    sandbox: {
      ...sandbox,
      ...(sandbox.hide === undefined ? {} : { hide: sandbox.hide.map(absolute) }),
      ...(sandbox.writable === undefined ? {} : { writable: sandbox.writable.map(absolute) }),
    },
  };
}

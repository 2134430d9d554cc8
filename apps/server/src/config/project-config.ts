import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { safeParseJsonc } from '@molf/permissions';
import { MolfError } from '@molf/protocol';
import type { z } from 'zod';
import { describeConfigIssue } from './describe-config-issue.ts';
import { type ServerConfigFile, ServerConfigFileSchema } from './load-server-config.ts';

/**
 * A project's own config, `{project}/.molf/config.jsonc`: its default model and agent limits, with
 * the user config's names and rules. Nothing else: keys, providers and notification targets are
 * the user's (a project's files travel in its repository).
 */
export const ProjectConfigFileSchema = ServerConfigFileSchema.pick({ model: true, agent: true });
export type ProjectConfigFile = z.infer<typeof ProjectConfigFileSchema>;

/** Where a project's config is: `.molf/config.jsonc` in its directory (the worker's workdir). */
export function projectConfigPath(projectDir: string): string {
  return join(projectDir, '.molf', 'config.jsonc');
}

/**
 * Reads a project's config file: `{}` when there is none, else its settings; a file that does not
 * parse or holds what it may not is a `config_invalid` error naming the file, the setting, the line
 * and the column.
 */
export async function loadProjectConfigFile(path: string): Promise<ProjectConfigFile> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new MolfError('config_invalid', `cannot read the project config ${path}: ${(error as Error).message}`);
  }
  const read = safeParseJsonc(text);
  if (!read.ok) {
    const { line, column, message } = read.error;
    throw new MolfError('config_invalid', `${path}: line ${line}, column ${column}: ${message}`);
  }
  const parsed = ProjectConfigFileSchema.safeParse(read.value ?? {});
  if (!parsed.success) {
    throw new MolfError(
      'config_invalid',
      describeConfigIssue({
        file: path,
        text,
        issue: parsed.error.issues[0],
        // Only a top-level name: a misspelt limit inside "agent" gets the schema's "Unrecognized key".
        unknownSetting: ([name, ...rest]) =>
          rest.length === 0
            ? `a project config holds only "model" and "agent" (its limits); "${String(name)}" belongs in the user config`
            : undefined,
      }),
    );
  }
  return parsed.data;
}

/**
 * The user config with a project's settings over it: the project's model, and each agent limit
 * the project sets (the others stay the user's). Flags and the environment come on top of both
 * (`toModelSettings`), so the order is flag > env > project > user > default.
 */
export function withProjectConfig(user: ServerConfigFile, project: ProjectConfigFile): ServerConfigFile {
  return {
    ...user,
    ...(project.model === undefined ? {} : { model: project.model }),
    ...(project.agent === undefined ? {} : { agent: { ...user.agent, ...project.agent } }),
  };
}

import { isMolfError } from '@molf/protocol';
import {
  loadProjectConfigFile,
  loadServerConfigFile,
  type ProjectConfigFile,
  projectConfigPath,
  type ServerConfigFile,
  toModelSettings,
  withProjectConfig,
} from '@molf/server';
import type { MolfPaths } from '@molf/worker/molf-paths';
import { checkBubblewrap } from './check-bubblewrap.ts';
import { checkConnection } from './check-connection.ts';
import { checkMcpServers } from './check-mcp-servers.ts';
import { checkNode } from './check-node.ts';
import { checkPrivateDir, checkSecretFile } from './check-private-paths.ts';
import { checkProviderKeys } from './check-provider-keys.ts';
import { checkRipgrep } from './check-ripgrep.ts';
import type { DoctorCheck } from './doctor-check.ts';

export type DoctorOptions = {
  /** The project: its `.mcp.json` and the connection saved for it. */
  workdir: string;
  /** Where Molf keeps its files here (with `--data-dir` when one was given). */
  paths: Pick<MolfPaths, 'dataDir' | 'stateDir' | 'clientDir' | 'configFile'>;
  /** `--config`, else the paths' config file when it exists, as `molf server` reads it. */
  configFile?: string | undefined;
  env: NodeJS.ProcessEnv;
};

/** A config file's problem: the server (or `molf up`, `molf run`, `molf chat` here) refuses to start with it. */
function configProblem(file: string, error: unknown): DoctorCheck {
  if (!isMolfError(error)) throw error;
  return {
    id: 'config',
    status: 'error',
    summary: `the config cannot be used: ${error.message}`,
    fix: `correct ${file} (Molf refuses to start with it)`,
  };
}

/**
 * The models config as `molf up`, `molf run` and `molf chat` here would read it (the user's config
 * with this project's `.molf/config.jsonc` over it, then MOLF_MODEL): its providers' checks, or why
 * it cannot be read.
 */
async function checkServerConfig(options: DoctorOptions): Promise<DoctorCheck[]> {
  const configFile = options.configFile ?? options.paths.configFile;
  let user: ServerConfigFile;
  try {
    user = await loadServerConfigFile(configFile, { optional: options.configFile === undefined });
  } catch (error) {
    return [configProblem(configFile, error)];
  }
  const projectFile = projectConfigPath(options.workdir);
  let project: ProjectConfigFile;
  try {
    project = await loadProjectConfigFile(projectFile);
  } catch (error) {
    return [configProblem(projectFile, error)];
  }
  const { models } = toModelSettings(withProjectConfig(user, project), {
    model: emptyToUndefined(options.env.MOLF_MODEL),
  });
  const holdsSecrets =
    Object.values(user.keys ?? {}).some((key) => key !== '') ||
    Object.values(user.providers ?? {}).some(
      (provider) => provider.apiKey !== undefined || provider.headers !== undefined,
    );
  return [
    ...(holdsSecrets
      ? [await checkSecretFile({ id: 'config-file', label: 'config file (API keys)', file: configFile })]
      : []),
    ...checkProviderKeys({ settings: { ...models, env: options.env }, configFile, env: options.env }),
  ];
}

function emptyToUndefined(value: string | undefined): string | undefined {
  return value === '' ? undefined : value;
}

/**
 * Every check of `molf doctor`, run at once, in the order they are shown: the runtime (Node,
 * ripgrep, bubblewrap), the server client commands would use, Molf's private directories, the
 * model providers, the project's MCP servers.
 */
export async function runDoctor(options: DoctorOptions): Promise<DoctorCheck[]> {
  const { env, workdir, paths } = options;
  // Each holds what other users must not read: sessions and credentials, logs, saved tokens. (The
  // config directory is the user's, often made by hand: the config file is checked when it holds keys.)
  const directories = new Map<string, { id: string; label: string }>();
  for (const [dir, id, label] of [
    [paths.dataDir, 'data-dir', 'data directory'],
    [paths.stateDir, 'state-dir', 'state directory'],
    [paths.clientDir, 'client-dir', 'client directory'],
  ] as const) {
    if (!directories.has(dir)) directories.set(dir, { id, label });
  }
  const groups = await Promise.all([
    [checkNode()],
    checkRipgrep(env).then((check) => [check]),
    checkBubblewrap(env).then((check) => [check]),
    checkConnection({ cwd: workdir, env }).then((check) => [check]),
    Promise.all([...directories].map(([dir, { id, label }]) => checkPrivateDir({ id, label, dir }))),
    checkServerConfig(options),
    checkMcpServers({ workdir, env }),
  ]);
  return groups.flat();
}

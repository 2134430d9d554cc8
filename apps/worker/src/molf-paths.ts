import { isAbsolute, join, resolve } from 'node:path';

/**
 * Where Molf keeps its files on this machine. This module is the one place that knows: the CLI
 * starts the server and worker with these paths, and the worker hides them from sandboxed commands.
 * It loads nothing but `node:path` (the `molf up` supervisor bundles it; see scripts/build-cli.ts).
 */
export type MolfPaths = {
  /**
   * `xdg`: the XDG base directories (Linux). `single`: one directory for everything, as Molf kept
   * before: `$MOLF_HOME` (or `--data-dir`) when set, else `~/.molf` on other systems.
   */
  layout: 'xdg' | 'single';
  /** The user config (`config.jsonc`): `$XDG_CONFIG_HOME/molf`, default `~/.config/molf`. */
  configDir: string;
  /** The server's data (credentials, sessions, workers, cron, audit): `$XDG_DATA_HOME/molf`, default `~/.local/share/molf`. */
  dataDir: string;
  /** Logs and other state (chat input history): `$XDG_STATE_HOME/molf`, default `~/.local/state/molf`. */
  stateDir: string;
  /** `{stateDir}/logs`: the server's and the embedded stacks' logs. */
  logsDir: string;
  /** `{configDir}/config.jsonc`: models, keys, providers, agent limits. */
  configFile: string;
  /**
   * Where clients save connections (`connections.json`, 0600): `$MOLF_CLIENT_DIR`, else the state
   * dir (`$MOLF_HOME` when set). Never moved by `--data-dir`, so `molf up --data-dir …` and a later
   * `molf chat` without the flag find the same saved connection.
   */
  clientDir: string;
  /** `{stateDir}/chat-history.jsonl`: what was typed in `molf chat`, for the up arrow. */
  chatHistoryFile: string;
  /** `~/.molf`, where Molf kept everything before it followed XDG; read only to move it (see the CLI's molf-home/). */
  legacyDir: string;
};

/** A variable's value when it is set and not empty. */
function variable(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value === '' ? undefined : value;
}

/** An XDG base directory: the variable when it holds an absolute path (the spec says to ignore a relative one), else the default under home. */
function baseDirectory(env: NodeJS.ProcessEnv, name: string, fallback: string): string {
  const value = variable(env, name);
  return value !== undefined && isAbsolute(value) ? value : fallback;
}

/**
 * Molf's paths for an environment and a home directory. `dataDir` is an explicit `--data-dir` (it
 * wins over `$MOLF_HOME`); either puts config, data and logs in that one directory, as before.
 * Relative `MOLF_HOME`/`MOLF_CLIENT_DIR`/`dataDir` are resolved against the current directory.
 */
export function resolveMolfPaths(options: {
  env: NodeJS.ProcessEnv;
  home: string;
  /** Default `process.platform`: XDG on Linux, `~/.molf` elsewhere. */
  platform?: NodeJS.Platform;
  /** An explicit `--data-dir`. Default none. */
  dataDir?: string | undefined;
}): MolfPaths {
  const { env, home } = options;
  const legacyDir = join(home, '.molf');
  const molfHome = variable(env, 'MOLF_HOME');
  const clientDir = variable(env, 'MOLF_CLIENT_DIR');
  // Elsewhere than Linux, Molf keeps its one directory.
  const systemDefault = (options.platform ?? process.platform) === 'linux' ? undefined : legacyDir;
  const defaultStateDir =
    systemDefault ?? join(baseDirectory(env, 'XDG_STATE_HOME', join(home, '.local', 'state')), 'molf');
  const explicit = options.dataDir === undefined || options.dataDir === '' ? molfHome : options.dataDir;
  const single = explicit === undefined ? systemDefault : resolve(explicit);
  const configDir = single ?? join(baseDirectory(env, 'XDG_CONFIG_HOME', join(home, '.config')), 'molf');
  const dataDir = single ?? join(baseDirectory(env, 'XDG_DATA_HOME', join(home, '.local', 'share')), 'molf');
  const stateDir = single ?? defaultStateDir;
  return {
    layout: single === undefined ? 'xdg' : 'single',
    configDir,
    dataDir,
    stateDir,
    logsDir: join(stateDir, 'logs'),
    configFile: join(configDir, 'config.jsonc'),
    // MOLF_HOME moves it, a --data-dir flag does not: see the field's comment.
    clientDir: resolve(clientDir ?? molfHome ?? defaultStateDir),
    chatHistoryFile: join(stateDir, 'chat-history.jsonl'),
    legacyDir,
  };
}

/**
 * Every directory where Molf may keep credentials, tokens or sessions for this environment:
 * `~/.molf`, the XDG directories, and `$MOLF_HOME`/`$MOLF_CLIENT_DIR` when set. Sandboxed commands
 * see none of them.
 */
export function molfDirectories(options: {
  env: NodeJS.ProcessEnv;
  home: string;
  platform?: NodeJS.Platform;
}): string[] {
  const defaults = resolveMolfPaths({
    ...options,
    env: { ...options.env, MOLF_HOME: undefined, MOLF_CLIENT_DIR: undefined },
  });
  const given = resolveMolfPaths(options);
  return [
    ...new Set([
      defaults.legacyDir,
      defaults.configDir,
      defaults.dataDir,
      defaults.stateDir,
      given.dataDir,
      given.clientDir,
    ]),
  ];
}

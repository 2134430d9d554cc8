import { existsSync, realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MolfError } from '@molf/protocol';
import { z } from 'zod';
import { molfDirectories } from '../molf-paths.ts';

export const SandboxModeSchema = z.enum(['off', 'on', 'required']);
export type SandboxMode = z.infer<typeof SandboxModeSchema>;

/** The sandbox of `shell_exec` and stdio MCP servers, as `createWorker({ sandbox })` takes it. */
export type SandboxConfig = {
  /**
   * `off`: commands run as the worker's user with no sandbox. `on`: a self-test at start; if it
   * fails the worker says so loudly, reports `failed: …` and runs without the sandbox.
   * `required`: a failed self-test stops the worker from starting. Default `off`.
   */
  mode?: SandboxMode;
  /** Whether sandboxed commands have the network (off: a namespace with only its own loopback). Default true. */
  network?: boolean;
  /** Run stdio MCP servers in the sandbox too, under the same policy. Default true. */
  mcp?: boolean;
  /**
   * Paths hidden from sandboxed commands besides the defaults (Molf's own directories: `~/.molf`,
   * the XDG ones, `$MOLF_HOME`, `$MOLF_CLIENT_DIR`): a directory looks empty, a file reads empty. `~/` is the worker user's
   * home; relative paths are against the workdir. Default none.
   */
  hide?: string[];
  /**
   * Paths sandboxed commands may write besides the workdir and their private `/tmp` (a cache such
   * as `~/.npm`). `~/` and relative paths as for `hide`. Default none.
   */
  writable?: string[];
  /**
   * Tests only, never read from a file or a flag: rewrites the bwrap options, so a test can give the
   * self-test a sandbox that does not enforce. Default none.
   */
  testOnlyRewriteArguments?: (args: string[]) => string[];
};

const PathSchema = z.string().trim().min(1).max(4_096);

/** The `sandbox` object of a worker config file. */
export const SandboxConfigFileSchema = z
  .strictObject({
    mode: SandboxModeSchema,
    network: z.boolean(),
    mcp: z.boolean(),
    hide: z.array(PathSchema).max(256),
    writable: z.array(PathSchema).max(256),
  })
  .partial();

/** Files and directories inside the workdir that commands may read but not write: writing them starts code later. */
export const READ_ONLY_IN_WORKDIR = ['.molf', '.git/hooks', '.git/config'] as const;

/** The root of the Molf installation this worker runs from (its pnpm workspace). */
function findInstallRoot(): string {
  let directory = dirname(fileURLToPath(import.meta.url));
  for (let up = 0; up < 8; up += 1) {
    if (existsSync(join(directory, 'pnpm-workspace.yaml'))) return directory;
    directory = dirname(directory);
  }
  return resolve(dirname(fileURLToPath(import.meta.url)), '../../../..');
}

/**
 * Molf's own Node binary and installation when they live under /tmp: the sandbox's private /tmp
 * would hide them, and the self-test probe and Node-run MCP servers need them (a checkout in /tmp,
 * as CI clones do). Bound again read-only; elsewhere they are on the read-only root already.
 */
export function molfRuntimePaths(options: { execPath?: string; installRoot?: string } = {}): string[] {
  let execPath = options.execPath ?? process.execPath;
  try {
    if (options.execPath === undefined) execPath = realpathSync(execPath);
  } catch {
    // Not resolvable: keep it as given.
  }
  const paths = [execPath, options.installRoot ?? findInstallRoot()];
  return [...new Set(paths.filter((path) => path === '/tmp' || path.startsWith('/tmp/')))];
}

/** A sandbox config with its defaults applied and every path absolute. */
export type SandboxSettings = {
  mode: SandboxMode;
  network: boolean;
  mcp: boolean;
  workdir: string;
  /** Absolute; may not exist (checked again at each spawn). */
  hidden: string[];
  writable: string[];
  readOnly: string[];
  rewriteArguments: ((args: string[]) => string[]) | undefined;
};

function toAbsolute(path: string, options: { base: string; home: string }): string {
  if (path === '~') return options.home;
  if (path.startsWith('~/')) return join(options.home, path.slice(2));
  return resolve(options.base, path);
}

/**
 * The paths hidden whatever the config says: Molf's own directories (`~/.molf`, the XDG ones, and
 * the data and client dirs the environment names). Read at start, before anything scrubs the environment.
 */
export function defaultHiddenPaths(options: { env: NodeJS.ProcessEnv; home: string }): string[] {
  return molfDirectories(options);
}

/** Applies the defaults; with the sandbox on, hiding the workdir itself is a `config_invalid` error. */
export function toSandboxSettings(
  config: SandboxConfig | undefined,
  context: { workdir: string; env: NodeJS.ProcessEnv; home?: string },
): SandboxSettings {
  const home = context.home ?? homedir();
  const absolute = (path: string) => toAbsolute(path, { base: context.workdir, home });
  const hidden = [
    ...new Set([...defaultHiddenPaths({ env: context.env, home }), ...(config?.hide ?? []).map(absolute)]),
  ];
  const mode = config?.mode ?? 'off';
  // Hiding the workdir would leave commands nothing to work on (a directory above it is fine: the
  // workdir is mounted again on top of the empty one). Without a sandbox nothing is hidden anyway.
  if (mode !== 'off' && hidden.includes(context.workdir)) {
    throw new MolfError('config_invalid', `the sandbox cannot hide ${context.workdir}: it is the workdir`);
  }
  return {
    mode,
    network: config?.network ?? true,
    mcp: config?.mcp ?? true,
    workdir: context.workdir,
    hidden,
    writable: [...new Set((config?.writable ?? []).map(absolute))],
    readOnly: [...READ_ONLY_IN_WORKDIR.map((name) => join(context.workdir, name)), ...molfRuntimePaths()],
    rewriteArguments: config?.testOnlyRewriteArguments,
  };
}

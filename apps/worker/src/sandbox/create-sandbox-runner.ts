import { closeSync, constants, fstatSync, openSync, readlinkSync } from 'node:fs';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { MolfError } from '@molf/protocol';
import { type SandboxMount, toBwrapArguments } from './bwrap-arguments.ts';
import { planSandboxMounts } from './plan-sandbox-mounts.ts';
import type { SandboxSettings } from './sandbox-config.ts';

/** A command ready to spawn in the sandbox. */
export type WrappedCommand = {
  file: string;
  args: string[];
  /**
   * Descriptors the child must get as fds 3, 4, … (`stdio: ['…', '…', '…', ...fds]`); empty
   * unless `passFds` was asked for.
   */
  fds: number[];
  /**
   * With `status`: the child's fd (after `fds`) where the caller puts a pipe to read bwrap's JSON
   * status from (`--json-status-fd`). bwrap writes `"exit-code"` there only if the command did
   * start, after its sandbox was set up: without it, a failure is bwrap's own (sandboxStarted).
   */
  statusFd?: number;
  /** Closes the worker's copies of `fds`: call it once the child is spawned (or could not be). */
  close(): void;
};

/** Whether bwrap's JSON status (see WrappedCommand.statusFd) says that the command started. */
export function sandboxStarted(status: string): boolean {
  return /"exit-code"/.test(status);
}

/** Runs commands inside an active sandbox; what shell_exec and stdio MCP servers are given. */
export type SandboxRunner = {
  readonly workdir: string;
  /** Whether commands have the network. */
  readonly network: boolean;
  /** Writable besides the workdir and the private /tmp. */
  readonly writable: readonly string[];
  /**
   * Whether the policy lets a command write this absolute path: in the workdir except what is
   * read-only there (`.molf`, `.git` and what it protects in it), in the private /tmp and /dev, in a
   * writable path or a hidden directory (an empty tmpfs). No file system is looked at.
   */
  canWrite(path: string): boolean;
  /**
   * The argv that runs `file args` in the sandbox with `cwd` as its directory: bwrap and its
   * options first. With `passFds` (the caller passes `fds` to the child), the directories inside
   * the workdir are pinned and what is read-only inside it is bound from descriptors; without it
   * (a caller that cannot pass descriptors, such as the MCP SDK's transport), nothing is pinned
   * and the read-only paths are bound by path.
   */
  wrap(
    command: { file: string; args: readonly string[]; cwd: string },
    options?: { passFds?: boolean; status?: boolean },
  ): Promise<WrappedCommand>;
};

function isInside(parent: string, child: string): boolean {
  const path = relative(parent, child);
  return path !== '' && !path.startsWith('..') && !isAbsolute(path);
}

const isAtOrInside = (parent: string, child: string) => parent === child || isInside(parent, child);

/** What the sandbox makes read-only in a git directory (planGitMounts), by name. */
const GIT_PROTECTED_NAME = /^(hooks|config|config\.worktree|commondir)$/;

/** The canWrite of a policy (see SandboxRunner). */
function canWriteUnder(settings: SandboxSettings): (path: string) => boolean {
  return (given) => {
    const path = resolve(given);
    if (settings.readOnly.some((readOnly) => isAtOrInside(readOnly, path))) return false;
    if (isAtOrInside(settings.workdir, path)) {
      const names = relative(settings.workdir, path).split(sep);
      // .git itself (a file, when the workdir is a worktree) and its hooks, config and commondir,
      // its submodules' and its worktrees' too.
      if (names[0] === '.git') return names.length > 1 && !names.slice(1).some((name) => GIT_PROTECTED_NAME.test(name));
      return true;
    }
    // Inside a hidden directory is its empty tmpfs; a hidden file is /dev/null bound read-only.
    return (
      ['/tmp', '/dev', ...settings.writable].some((root) => isAtOrInside(root, path)) ||
      settings.hidden.some((hidden) => isInside(hidden, path))
    );
  };
}

function closeAll(fds: readonly number[]): void {
  for (const fd of fds) {
    try {
      closeSync(fd);
    } catch {
      // Closed already.
    }
  }
}

/**
 * A descriptor of the directory (or, unless `directory`, regular file) at `path` that is, now, at
 * `path` and nowhere else: the last component is not followed (O_NOFOLLOW), and a link above it
 * shows in the path the kernel gives for the descriptor, which must be `path` itself. O_NONBLOCK: a FIFO put there must not hang the
 * worker. Undefined when the path is gone; a `sandbox_failed` error when it is not what it was.
 */
export function openChecked(path: string, directory: boolean): number | undefined {
  let fd: number;
  try {
    fd = openSync(
      path,
      constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | (directory ? constants.O_DIRECTORY : 0),
    );
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new MolfError(
      'sandbox_failed',
      `the sandbox could not protect ${path} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}); the command did not run`,
    );
  }
  let where: string | undefined;
  let isDirectory = false;
  let isFile = false;
  try {
    where = readlinkSync(`/proc/self/fd/${fd}`);
    const info = fstatSync(fd);
    isDirectory = info.isDirectory();
    isFile = info.isFile();
  } catch {
    where = undefined;
  }
  if (where !== path || (directory ? !isDirectory : !isDirectory && !isFile)) {
    closeAll([fd]);
    throw new MolfError(
      'sandbox_failed',
      `${path} changed while the command was starting (it is not what the sandbox checked); the command did not run`,
    );
  }
  return fd;
}

/**
 * The mounts with descriptors for what lies inside a read-write root (pinned directories and
 * read-only paths), numbered as the child sees them (3, 4, …), and the worker's descriptors in
 * that order. Closes what it opened if it throws.
 */
function withDescriptors(
  mounts: readonly SandboxMount[],
  readWriteRoots: readonly string[],
): { mounts: SandboxMount[]; fds: number[] } {
  const fds: number[] = [];
  const result: SandboxMount[] = [];
  try {
    for (const mount of mounts) {
      const inside = readWriteRoots.some((root) => isInside(root, mount.path));
      if (mount.type === 'pinned' || (mount.type === 'read-only' && inside)) {
        const fd = openChecked(mount.path, mount.type === 'pinned');
        if (fd === undefined) continue;
        result.push({ ...mount, fd: 3 + fds.length });
        fds.push(fd);
      } else {
        result.push(mount);
      }
    }
  } catch (error) {
    closeAll(fds);
    throw error;
  }
  return { mounts: result, fds };
}

/** A runner for one policy; the mounts are planned again at every spawn (paths come and go). */
export function createSandboxRunner(options: { bwrap: string; settings: SandboxSettings }): SandboxRunner {
  const { settings } = options;
  return {
    workdir: settings.workdir,
    network: settings.network,
    writable: settings.writable,
    canWrite: canWriteUnder(settings),
    async wrap(command, wrapOptions = {}) {
      const planned = await planSandboxMounts(settings);
      const readWriteRoots = planned.filter((mount) => mount.type === 'writable').map((mount) => mount.path);
      const { mounts, fds } =
        wrapOptions.passFds === true
          ? withDescriptors(planned, readWriteRoots)
          : { mounts: planned.filter((mount) => mount.type !== 'pinned'), fds: [] };
      const sandboxArgs = toBwrapArguments({ mounts, network: settings.network, cwd: command.cwd });
      const statusFd = wrapOptions.status === true && wrapOptions.passFds === true ? 3 + fds.length : undefined;
      if (statusFd !== undefined) sandboxArgs.unshift('--json-status-fd', String(statusFd));
      const rewritten = settings.rewriteArguments?.(sandboxArgs) ?? sandboxArgs;
      return {
        file: options.bwrap,
        args: [...rewritten, '--', command.file, ...command.args],
        fds,
        ...(statusFd === undefined ? {} : { statusFd }),
        close: () => closeAll(fds),
      };
    },
  };
}

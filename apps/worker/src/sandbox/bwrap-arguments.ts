/**
 * One mount of a sandbox policy on top of the read-only root, for an existing, canonical path.
 * `fd`: the bind's source is this descriptor of bwrap's (`--bind-fd`), opened and checked by the
 * worker, instead of the path: a path inside a writable directory could be swapped for a link to
 * anywhere between the planning and bwrap's mount.
 */
export type SandboxMount =
  /** Bound read-write: the workdir and configured writable paths. */
  | { type: 'writable'; path: string }
  /**
   * A directory inside a writable one bound onto itself, read-write, so that it is a mount point:
   * it cannot be renamed or removed (EBUSY), nor can anything above it up to the writable root.
   * Only ever from a descriptor: bound by path, a swap would make any directory writable.
   */
  | { type: 'pinned'; path: string; fd?: number }
  /** Bound again read-only inside a writable one: files whose writing starts code later. */
  | { type: 'read-only'; path: string; fd?: number }
  /** Covered by an empty tmpfs: Molf's data, client and configured directories. */
  | { type: 'hidden-directory'; path: string }
  /** Covered by /dev/null: token files and configured files. */
  | { type: 'hidden-file'; path: string };

/**
 * The bubblewrap options of a policy, without the command: `bwrap ...these -- file args`.
 *
 * - `--cap-drop ALL` always: bwrap run as root keeps every capability otherwise, and with
 *   CAP_SYS_ADMIN a command can `umount` a hidden directory and read what it covers.
 * - `--unshare-pid` with a fresh `/proc`: the worker's `/proc/<pid>/environ` and every other
 *   process of the host are out of sight; when the command's shell exits, the namespace ends
 *   and its background children with it.
 * - `--die-with-parent`: a worker killed with SIGKILL takes its commands along.
 * - `--new-session`: no TIOCSTI into the worker's terminal.
 * - A private `/tmp` before the mounts, so a workdir under /tmp is bound on top of it.
 * - Mounts in the order given (the planner orders them parents first); a pinned directory without
 *   a descriptor is left out.
 */
export function toBwrapArguments(options: {
  mounts: readonly SandboxMount[];
  network: boolean;
  /** The command's working directory inside the sandbox. */
  cwd: string;
}): string[] {
  const args = ['--die-with-parent', '--unshare-pid', '--new-session', '--cap-drop', 'ALL'];
  if (!options.network) args.push('--unshare-net');
  args.push('--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp');
  for (const mount of options.mounts) {
    switch (mount.type) {
      case 'writable':
        args.push('--bind', mount.path, mount.path);
        break;
      case 'pinned':
        if (mount.fd !== undefined) args.push('--bind-fd', String(mount.fd), mount.path);
        break;
      case 'read-only':
        if (mount.fd === undefined) args.push('--ro-bind', mount.path, mount.path);
        else args.push('--ro-bind-fd', String(mount.fd), mount.path);
        break;
      case 'hidden-directory':
        args.push('--tmpfs', mount.path);
        break;
      case 'hidden-file':
        args.push('--ro-bind', '/dev/null', mount.path);
        break;
      default:
        mount satisfies never;
    }
  }
  args.push('--chdir', options.cwd);
  return args;
}

/** One mount of a sandbox policy on top of the read-only root, for an existing, canonical path. */
export type SandboxMount =
  /** Bound read-write: the workdir and configured writable paths. */
  | { type: 'writable'; path: string }
  /** Bound again read-only inside a writable one: files whose writing starts code later. */
  | { type: 'read-only'; path: string }
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
 * - Mounts in the order given (the planner orders them parents first).
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
      case 'read-only':
        args.push('--ro-bind', mount.path, mount.path);
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

import { toBwrapArguments } from './bwrap-arguments.ts';
import { planSandboxMounts } from './plan-sandbox-mounts.ts';
import type { SandboxSettings } from './sandbox-config.ts';

/** Runs commands inside an active sandbox; what shell_exec and stdio MCP servers are given. */
export type SandboxRunner = {
  readonly workdir: string;
  /** Whether commands have the network. */
  readonly network: boolean;
  /** Writable besides the workdir and the private /tmp. */
  readonly writable: readonly string[];
  /** The argv that runs `file args` in the sandbox with `cwd` as its directory: bwrap and its options first. */
  wrap(command: { file: string; args: readonly string[]; cwd: string }): Promise<{ file: string; args: string[] }>;
};

/** A runner for one policy; the mounts are planned again at every spawn (paths come and go). */
export function createSandboxRunner(options: { bwrap: string; settings: SandboxSettings }): SandboxRunner {
  const { settings } = options;
  return {
    workdir: settings.workdir,
    network: settings.network,
    writable: settings.writable,
    async wrap(command) {
      const mounts = await planSandboxMounts(settings);
      const sandboxArgs = toBwrapArguments({ mounts, network: settings.network, cwd: command.cwd });
      const rewritten = settings.rewriteArguments?.(sandboxArgs) ?? sandboxArgs;
      return { file: options.bwrap, args: [...rewritten, '--', command.file, ...command.args] };
    },
  };
}

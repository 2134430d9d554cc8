import type { SandboxRunner } from './create-sandbox-runner.ts';

/** What the sandbox refused a command, as its output shows it. */
export type SandboxRefusal =
  /** A write outside the writable paths (EROFS). */
  | { type: 'read_only' }
  /** A connection or name lookup while the network is cut. */
  | { type: 'network' }
  /** bwrap itself could not set the sandbox up (its own `bwrap: …` message). */
  | { type: 'setup'; message: string };

const READ_ONLY = /Read-only file system|\bEROFS\b/;

/** What name lookups and connections print when there is no network, across the usual tools. */
const NO_NETWORK =
  /Network is unreachable|\bENETUNREACH\b|Could not resolve host|Temporary failure in name resolution|\bEAI_AGAIN\b|getaddrinfo|Name or service not known|unable to resolve host|No address associated with hostname|Connection refused|\bECONNREFUSED\b/i;

/**
 * Whether a sandboxed command failed because of the sandbox. Only failed commands count (a zero
 * exit that merely prints the words, such as a grep through a log, is no refusal), and network
 * messages only while the network is cut.
 */
export function detectSandboxRefusal(options: {
  output: string;
  exitCode: number;
  network: boolean;
}): SandboxRefusal | undefined {
  if (options.exitCode === 0) return undefined;
  if (options.exitCode === 1 && options.output.startsWith('bwrap: ')) {
    return { type: 'setup', message: options.output.split('\n')[0] ?? '' };
  }
  if (READ_ONLY.test(options.output)) return { type: 'read_only' };
  if (!options.network && NO_NETWORK.test(options.output)) return { type: 'network' };
  return undefined;
}

/** The tool error the model reads: what was refused and what it can do instead. */
export function describeSandboxRefusal(refusal: SandboxRefusal, runner: SandboxRunner): string {
  switch (refusal.type) {
    case 'read_only': {
      const writable = [
        `the workdir ${runner.workdir} (except .molf, .git/hooks and .git/config)`,
        '/tmp (private to this command and emptied when it ends)',
        ...runner.writable,
      ];
      return (
        'The sandbox refused a write: outside the writable paths the file system is read-only. ' +
        `Writable: ${writable.join('; ')}. Write inside the workdir instead (for a tool's cache, point it ` +
        'there or to /tmp, e.g. npm_config_cache=/tmp/npm-cache), or ask the user to make the path ' +
        'writable (molf worker --sandbox-writable PATH).'
      );
    }
    case 'network':
      return (
        'The sandbox cut this command off the network (the worker runs with --sandbox-network off): ' +
        'name lookups and connections fail, to other hosts and to services on this machine alike. ' +
        'Work offline (e.g. with dependencies already in the workdir), or ask the user to turn the network on.'
      );
    case 'setup':
      return `The sandbox could not start the command: ${refusal.message}`;
    default:
      return refusal satisfies never;
  }
}

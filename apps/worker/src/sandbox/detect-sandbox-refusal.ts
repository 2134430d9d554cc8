import { resolve } from 'node:path';
import type { SandboxRunner } from './create-sandbox-runner.ts';

/** What the sandbox refused a command, as its output shows it. */
export type SandboxRefusal =
  /** A write outside the writable paths (EROFS). */
  | { type: 'read_only' }
  /** A connection or name lookup while the network is cut. */
  | { type: 'network' }
  /** bwrap itself could not set the sandbox up (its own `bwrap: …` message). */
  | { type: 'setup'; message: string };

/** A line that says a write failed on a read-only file system (EROFS, errno 30), as tools print it. */
const READ_ONLY = /read-only file system|\bEROFS\b|\(os error 30\)/i;

/** What name lookups and connections print when there is no network, across the usual tools. */
const NO_NETWORK =
  /Network is unreachable|\bENETUNREACH\b|Could not resolve host|Temporary failure in name resolution|\bEAI_AGAIN\b|getaddrinfo|Name or service not known|unable to resolve host|No address associated with hostname|Connection refused|\bECONNREFUSED\b/i;

const QUOTES = `'"‘’\``;
const QUOTED = new RegExp(`[${QUOTES}]([^${QUOTES}\\n]+)[${QUOTES}]`, 'g');
/** An absolute (or ./, ../) path in running text. */
const BARE_PATH = /(?:^|[\s(=,])(\.{0,2}\/[^\s:'"‘’`,()]+)/g;
/** npm's own line naming the path of an error. */
const NPM_PATH = /^npm (?:error|ERR!) path (.+)$/gm;

/**
 * The paths an EROFS line names: the last word before `: Read-only file system` (coreutils, bash,
 * git, Go: `touch: cannot touch '/etc/x': Read-only file system`), and the quoted paths after it
 * (Node, Python: `EROFS: read-only file system, open '/etc/x'`). None for a line that names none
 * (Rust's `Read-only file system (os error 30)`, npm's `npm error code EROFS`).
 */
function pathsInLine(line: string): string[] {
  const paths: string[] = [];
  const at = line.search(/:\s*read-only file system/i);
  if (at > 0) {
    const before = line.slice(0, at).trim().split(/\s+/).pop() ?? '';
    const word = before.replace(new RegExp(`^[${QUOTES}]+|[${QUOTES}]+$`, 'g'), '');
    if (word !== '') paths.push(word);
  }
  const after = line.slice(Math.max(0, line.search(READ_ONLY)));
  for (const match of after.matchAll(QUOTED)) if (match[1] !== undefined) paths.push(match[1]);
  return paths;
}

/** Paths in a line of context (a line before a pathless EROFS line): quoted or absolute ones. */
function pathsNear(line: string): string[] {
  return [...line.matchAll(QUOTED), ...line.matchAll(BARE_PATH)].flatMap((match) =>
    match[1] !== undefined && /^\.{0,2}\//.test(match[1]) ? [match[1]] : [],
  );
}

/**
 * Whether the output tells of a write the sandbox refused: an EROFS line whose path (or, for a line
 * that names none, a path on the three lines before it or npm's `path` line) is one the policy does
 * not let the command write. A path it may write cannot have been refused by the sandbox, and a
 * message with no path at all says nothing of where.
 */
function refusedWrite(output: string, cwd: string, canWrite: (path: string) => boolean): boolean {
  const lines = output.split('\n');
  const npmPaths = [...output.matchAll(NPM_PATH)].flatMap((match) => (match[1] === undefined ? [] : [match[1].trim()]));
  return lines.some((line, index) => {
    if (!READ_ONLY.test(line)) return false;
    let paths = pathsInLine(line);
    if (paths.length === 0) paths = [...lines.slice(Math.max(0, index - 3), index).flatMap(pathsNear), ...npmPaths];
    return paths.some((path) => !canWrite(resolve(cwd, path)));
  });
}

/**
 * Whether a sandboxed command failed because of the sandbox. Only failed commands count (a zero
 * exit that merely prints the words, such as a grep through a log, is no refusal); a read-only
 * file system only for a path the policy does not let the command write (`canWrite`, relative
 * paths against the command's directory `cwd`); network messages only while the network is cut.
 * bwrap's own failure (`setup`): when `started` (bwrap's status, see sandboxStarted) says the
 * command never started; without it, when a `bwrap: ` line is the whole output.
 */
export function detectSandboxRefusal(options: {
  output: string;
  exitCode: number;
  network: boolean;
  cwd: string;
  canWrite: (path: string) => boolean;
  started?: boolean;
}): SandboxRefusal | undefined {
  if (options.exitCode === 0) return undefined;
  const output = options.output.trim();
  if (options.started === false) {
    const message = output.split('\n').find((line) => line.startsWith('bwrap: '));
    return {
      type: 'setup',
      message: message ?? `bwrap exited with code ${options.exitCode} before the command started`,
    };
  }
  if (
    options.started === undefined &&
    options.exitCode === 1 &&
    output.startsWith('bwrap: ') &&
    !output.includes('\n')
  ) {
    return { type: 'setup', message: output };
  }
  if (refusedWrite(options.output, options.cwd, options.canWrite)) return { type: 'read_only' };
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

import { resolve } from 'node:path';
import type { SandboxConfig, SandboxMode } from '@molf/worker';
import { type Command, InvalidArgumentError, Option } from 'commander';

/** The sandbox flags as commander parses them. */
export type SandboxFlags = {
  sandbox?: SandboxMode;
  sandboxNetwork?: boolean;
  sandboxMcp?: boolean;
  sandboxHide?: string[];
  sandboxWritable?: string[];
};

const MODES = new Set(['off', 'on', 'required']);

/**
 * `--sandbox` takes an optional mode, so `molf run --sandbox "fix the tests"` would read the prompt as
 * the mode: a bare `--sandbox` followed by a word that is no mode becomes `--sandbox=on`.
 */
export function normalizeSandboxArguments(argv: readonly string[]): string[] {
  const end = argv.indexOf('--');
  return argv.map((word, index) => {
    const next = argv[index + 1];
    const beforeEnd = end === -1 || index < end;
    return word === '--sandbox' &&
      beforeEnd &&
      next !== undefined &&
      next !== '--' &&
      !next.startsWith('-') &&
      !MODES.has(next)
      ? '--sandbox=on'
      : word;
  });
}

function parseMode(value: string): SandboxMode {
  if (value === 'off' || value === 'on' || value === 'required') return value;
  throw new InvalidArgumentError('use on, required or off');
}

function parseOnOff(value: string): boolean {
  if (value === 'on') return true;
  if (value === 'off') return false;
  throw new InvalidArgumentError('use on or off');
}

function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/**
 * `--sandbox [mode]`, `--sandbox-network`, `--sandbox-mcp` and (with `paths`) the repeatable
 * `--sandbox-hide` / `--sandbox-writable`, for `molf worker`, `molf up`, `molf run` and `molf chat`.
 */
export function addSandboxOptions(command: Command, options: { paths?: boolean } = {}): Command {
  command
    .addOption(
      new Option(
        '--sandbox [mode]',
        'run shell commands and stdio MCP servers in a bubblewrap sandbox: on (the bare flag; without it if ' +
          'the self-test fails), required (refuse to start then) or off',
      )
        .preset('on')
        .argParser(parseMode),
    )
    .addOption(
      new Option('--sandbox-network <on|off>', 'network for sandboxed commands (default on)').argParser(parseOnOff),
    )
    .addOption(
      new Option('--sandbox-mcp <on|off>', 'run stdio MCP servers in the sandbox too (default on)').argParser(
        parseOnOff,
      ),
    );
  if (options.paths !== false) {
    command
      .addOption(
        new Option('--sandbox-hide <path>', 'also hide this path from sandboxed commands (repeatable)').argParser(
          collect,
        ),
      )
      .addOption(
        new Option(
          '--sandbox-writable <path>',
          'also let sandboxed commands write this path, e.g. ~/.npm (repeatable)',
        ).argParser(collect),
      );
  }
  return command;
}

/**
 * The sandbox config from the flags over a config file's: a flag wins over the file's value, and
 * the path lists add up (paths relative to the current directory). `hide` adds paths the caller
 * knows about (a token file, a data dir).
 */
export function toSandboxConfig(
  flags: SandboxFlags,
  options: { file?: SandboxConfig | undefined; hide?: readonly string[] } = {},
): SandboxConfig {
  const file = options.file ?? {};
  const hide = [
    ...(file.hide ?? []),
    ...(flags.sandboxHide ?? []).map((path) => resolve(path)),
    ...(options.hide ?? []),
  ];
  const writable = [...(file.writable ?? []), ...(flags.sandboxWritable ?? []).map((path) => resolve(path))];
  const mode = flags.sandbox ?? file.mode;
  const network = flags.sandboxNetwork ?? file.network;
  const mcp = flags.sandboxMcp ?? file.mcp;
  return {
    ...(mode === undefined ? {} : { mode }),
    ...(network === undefined ? {} : { network }),
    ...(mcp === undefined ? {} : { mcp }),
    ...(hide.length === 0 ? {} : { hide }),
    ...(writable.length === 0 ? {} : { writable }),
  };
}

/** The flags again, for a child `molf worker` (as `molf up` starts it). */
export function toSandboxArguments(config: SandboxConfig): string[] {
  return [
    ...(config.mode === undefined ? [] : ['--sandbox', config.mode]),
    ...(config.network === undefined ? [] : ['--sandbox-network', config.network ? 'on' : 'off']),
    ...(config.mcp === undefined ? [] : ['--sandbox-mcp', config.mcp ? 'on' : 'off']),
    ...(config.hide ?? []).flatMap((path) => ['--sandbox-hide', path]),
    ...(config.writable ?? []).flatMap((path) => ['--sandbox-writable', path]),
  ];
}

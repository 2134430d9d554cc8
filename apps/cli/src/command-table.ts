import type { Command } from 'commander';

/** One top-level command: what `molf --help` lists for it, and how to load its module. */
export type CommandEntry = {
  name: string;
  /** The listing's left column, as commander prints it for the registered command (`run [options] <prompt>`). */
  term: string;
  description: string;
  /** Imports the command's module and returns its `register*Command`. */
  load: () => Promise<(program: Command) => void>;
};

/**
 * Every top-level command, in `molf --help` order. A command's module is imported only when that
 * command runs or shows its own help: the modules import the server, the worker, the AI SDK, the MCP
 * SDK and tree-sitter, and loading all of them made `molf --version` take 1.5 s and 160 MB. The
 * listing is written out here so `molf --help` needs none of them; a test holds it equal to what the
 * modules register.
 */
export const COMMANDS: readonly CommandEntry[] = [
  {
    name: 'up',
    term: 'up [options]',
    description:
      'start a server on loopback and a worker on the current directory, with fresh tokens; ' +
      'saves the connection so `molf` client commands run here need no flags',
    load: async () => (await import('./commands/up.ts')).registerUpCommand,
  },
  {
    name: 'server',
    term: 'server [options]',
    description: 'run the Molf server: sessions, policy and the worker registry, on one HTTP + WebSocket port',
    load: async () => (await import('./commands/server.ts')).registerServerCommand,
  },
  {
    name: 'migrate',
    term: 'migrate [options]',
    description:
      "bring a PostgreSQL database's schema up to this version, or copy a data dir (sessions, credentials, " +
      'workers, permissions, cron jobs) into one, keeping every id; run it again safely',
    load: async () => (await import('./commands/migrate.ts')).registerMigrateCommand,
  },
  {
    name: 'worker',
    term: 'worker [options]',
    description: 'run a worker daemon that executes tools in one project directory',
    load: async () => (await import('./commands/worker.ts')).registerWorkerCommand,
  },
  {
    name: 'workers',
    term: 'workers [options]',
    description: 'list the workers registered with the server and whether they are online',
    load: async () => (await import('./commands/workers.ts')).registerWorkersCommand,
  },
  {
    name: 'token',
    term: 'token',
    description:
      "the server's stored credentials: list, create or revoke them, on the server machine or with --server as an admin (no restart needed)",
    load: async () => (await import('./commands/token.ts')).registerTokenCommand,
  },
  {
    name: 'pair',
    term: 'pair [options]',
    description:
      'make a one-time code (5 minutes) that lets another machine join this server: a worker ' +
      '(molf worker --pair) or a person (molf login --pair); on the server machine, or with --server as an admin',
    load: async () => (await import('./commands/pair.ts')).registerPairCommand,
  },
  {
    name: 'login',
    term: 'login [options] <url>',
    description:
      'log this machine in to a Molf server: trade a pairing code (or save a given token) for a client credential, ' +
      'verify the server, and make it the default for client commands',
    load: async () => (await import('./commands/login.ts')).registerLoginCommand,
  },
  {
    name: 'logout',
    term: 'logout [url]',
    description:
      "forget this machine's saved login to a server (the credential stays valid until revoked on the server)",
    load: async () => (await import('./commands/login.ts')).registerLogoutCommand,
  },
  {
    name: 'trust',
    term: 'trust [options] [url]',
    description:
      "verify a wss:// server's certificate and pin it (or its CA) for this machine; --forget drops a pin, --list shows them",
    load: async () => (await import('./commands/trust.ts')).registerTrustCommand,
  },
  {
    name: 'tool',
    term: 'tool [options] <name> [args]',
    description: 'run one built-in tool in this process, exactly as a worker would, and print its result',
    load: async () => (await import('./commands/tool.ts')).registerToolCommand,
  },
  {
    name: 'permissions',
    term: 'permissions',
    description:
      "a worker's approval rules (permissions.jsonc): explain a decision, show or edit the rules, list or revoke grants",
    load: async () => (await import('./commands/permissions.ts')).registerPermissionsCommand,
  },
  {
    name: 'cron',
    term: 'cron',
    description: "scheduled prompts on a worker: list, add, remove, pause, resume or run a worker's cron jobs now",
    load: async () => (await import('./commands/cron.ts')).registerCronCommand,
  },
  {
    name: 'run',
    term: 'run [options] [prompt]',
    description:
      'run one prompt headless and stream the answer (for scripts and CI); without --server it starts a ' +
      'server and a worker on the current directory for the run',
    load: async () => (await import('./commands/run.ts')).registerRunCommand,
  },
  {
    name: 'sessions',
    term: 'sessions',
    description: "the sessions on the server: list them, show one's history, rename or remove them",
    load: async () => (await import('./commands/sessions.ts')).registerSessionsCommand,
  },
  {
    name: 'chat',
    term: 'chat [options]',
    description:
      'interactive session in the terminal: streaming answers, tool calls, approval prompts; without --server it ' +
      'starts a server and a worker on the current directory',
    load: async () => (await import('./commands/chat.ts')).registerChatCommand,
  },
  {
    name: 'mcp',
    term: 'mcp',
    description: "the MCP servers of a project's .mcp.json, as a worker would run them",
    load: async () => (await import('./commands/mcp.ts')).registerMcpCommand,
  },
  {
    name: 'completion',
    term: 'completion <shell>',
    description: 'print the shell completion script for bash, zsh or fish (commands, subcommands, options)',
    load: async () => (await import('./commands/completion.ts')).registerCompletionCommand,
  },
  {
    name: 'doctor',
    term: 'doctor [options]',
    description:
      'check what Molf needs here (Node.js, ripgrep, bubblewrap, the saved server, private directories, ' +
      "provider keys, the project's MCP servers) and say how to fix each problem; exits 1 if one is broken",
    load: async () => (await import('./commands/doctor.ts')).registerDoctorCommand,
  },
];

/**
 * The command `argv` (the user's words, after node and the script) runs or asks help for: the first
 * word that is not an option, or the one after `help`. Molf has no global options that take a value,
 * so the first other word is always the command's name.
 */
export function findCommandEntry(words: readonly string[]): CommandEntry | undefined {
  const operands = words.filter((word) => !word.startsWith('-'));
  const name = operands[0] === 'help' ? operands[1] : operands[0];
  return COMMANDS.find((entry) => entry.name === name);
}

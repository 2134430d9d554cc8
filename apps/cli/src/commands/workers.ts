import type { WorkerInfo } from '@molf/protocol';
import { describeSandbox } from '@molf/worker';
import { type Command, Option } from 'commander';
import { serverUrlOption } from '../cli-options.ts';
import { connectClient } from '../connect-client.ts';
import { type ClientConnectionOptions, resolveClientConnection } from '../resolve-client-connection.ts';
import { formatCatalogEntry, toOneLine } from './format-catalog-entry.ts';
import { formatTable } from './format-table.ts';

export function registerWorkersCommand(program: Command): void {
  program
    .command('workers')
    .description('list the workers registered with the server and whether they are online')
    .addOption(serverUrlOption())
    .addOption(new Option('--token <token>', 'client token').env('MOLF_CLIENT_TOKEN'))
    .option('--json', 'print JSON instead of a table')
    .action(async (options: ClientConnectionOptions & { json?: boolean }) => {
      const connection = await resolveClientConnection(options);
      await using client = await connectClient(connection);
      const workers = await client.rpc.workers.list.query();
      process.stdout.write(options.json === true ? `${JSON.stringify(workers, null, 2)}\n` : formatWorkers(workers));
    });
}

/** Longest sandbox cell: a failed self-test's reason is cut here (`--json` has it whole). */
const MAX_SANDBOX_CELL = 60;

function sandboxCell(worker: WorkerInfo): string {
  if (worker.sandbox === undefined) return '—';
  const text = describeSandbox(worker.sandbox);
  return text.length > MAX_SANDBOX_CELL ? `${text.slice(0, MAX_SANDBOX_CELL - 1)}…` : text;
}

/**
 * The workers as a table, then what each online worker offers besides its built-in tools: its skills,
 * the agents the task tool can run (built-in ones marked), the catalog's problems (the first few) and
 * its MCP servers with their state.
 */
export function formatWorkers(workers: WorkerInfo[]): string {
  if (workers.length === 0) return 'no workers registered\n';
  const details = workers.flatMap((worker) => {
    if (worker.state !== 'online') return [];
    const lines = [
      ...(worker.catalog === undefined ? [] : formatCatalog(worker.catalog)),
      ...formatMcpServers(worker.mcpServers ?? []),
    ];
    return lines.length === 0 ? [] : [`${[`worker ${worker.name} (${worker.workerId}):`, ...lines].join('\n')}\n`];
  });
  return [formatWorkerTable(workers), ...details].join('\n');
}

function formatWorkerTable(workers: WorkerInfo[]): string {
  return formatTable([
    ['NAME', 'STATE', 'SANDBOX', 'ID', 'WORKDIR', 'LAST SEEN'],
    ...workers.map((worker) => [
      worker.name,
      worker.state,
      sandboxCell(worker),
      worker.workerId,
      worker.workdir,
      worker.lastSeenAt,
    ]),
  ]);
}

/** Problems listed per worker; the count says how many there are. */
const MAX_PROBLEMS_SHOWN = 3;

function formatCatalog(catalog: NonNullable<WorkerInfo['catalog']>): string[] {
  const lines: string[] = [];
  if (catalog.skills.length === 0) lines.push('  skills: none');
  else {
    lines.push(`  skills (${catalog.skills.length}):`);
    for (const skill of catalog.skills) lines.push(`    ${formatCatalogEntry(skill)}`);
  }
  if (catalog.agents.length === 0) lines.push('  agents: none');
  else {
    lines.push(`  agents (${catalog.agents.length}):`);
    for (const agent of catalog.agents) lines.push(`    ${formatCatalogEntry(agent)}`);
  }
  if (catalog.problems.length > 0) {
    lines.push(`  problems (${catalog.problems.length}):`);
    for (const problem of catalog.problems.slice(0, MAX_PROBLEMS_SHOWN)) {
      lines.push(`    ${problem.path}: ${toOneLine(problem.message)}`);
    }
    const more = catalog.problems.length - MAX_PROBLEMS_SHOWN;
    if (more > 0) lines.push(`    … and ${more} more (molf workers --json lists them all)`);
  }
  return lines;
}

/** One line per MCP server: `name: status (n tools)`, and why when it is offline or denied. */
function formatMcpServers(servers: NonNullable<WorkerInfo['mcpServers']>): string[] {
  if (servers.length === 0) return [];
  return [
    `  mcp servers (${servers.length}):`,
    ...servers.map((server) => {
      const tools =
        server.tools.length === 0 ? '' : ` (${server.tools.length} tool${server.tools.length === 1 ? '' : 's'})`;
      const reason = server.reason === undefined ? '' : ` — ${toOneLine(server.reason)}`;
      return `    ${server.name}: ${server.status.replace('_', ' ')}${tools}${reason}`;
    }),
  ];
}

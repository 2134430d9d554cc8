import type { WorkerInfo } from '@molf/protocol';
import { describeSandbox } from '@molf/worker';
import { type Command, Option } from 'commander';
import { serverUrlOption } from '../cli-options.ts';
import { connectClient } from '../connect-client.ts';
import { type ClientConnectionOptions, resolveClientConnection } from '../resolve-client-connection.ts';

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

export function formatWorkers(workers: WorkerInfo[]): string {
  if (workers.length === 0) return 'no workers registered\n';
  const rows = [
    ['NAME', 'STATE', 'SANDBOX', 'ID', 'WORKDIR', 'LAST SEEN'],
    ...workers.map((worker) => [
      worker.name,
      worker.state,
      sandboxCell(worker),
      worker.workerId,
      worker.workdir,
      worker.lastSeenAt,
    ]),
  ];
  const widths = rows[0]?.map((_, column) => Math.max(...rows.map((row) => row[column]?.length ?? 0))) ?? [];
  return `${rows
    .map((row) =>
      row
        .map((cell, column) => cell.padEnd(widths[column] ?? 0))
        .join('  ')
        .trimEnd(),
    )
    .join('\n')}\n`;
}

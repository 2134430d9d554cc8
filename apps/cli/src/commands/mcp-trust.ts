import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline/promises';
import type { MolfClient } from '@molf/client';
import { addAllowRules, escapeGlob, MCP_SERVER_TOOL, toMcpServerSubject } from '@molf/permissions';
import { MolfError, type PermissionExplanation, type WorkerInfo } from '@molf/protocol';
import { parseMcpConfigEntries } from '@molf/worker';
import { type Command, Option } from 'commander';
import { serverUrlOption } from '../cli-options.ts';
import { connectClient } from '../connect-client.ts';
import { type ClientConnectionOptions, resolveClientConnection } from '../resolve-client-connection.ts';
import { pickWorker } from './permissions.ts';

type TrustOptions = ClientConnectionOptions & { worker?: string; yes?: boolean };

/** A save that lost a race with another change of the rules (an "always" answer) is redone this often. */
const SAVE_ATTEMPTS = 3;

type McpServer = { name: string; definition: Record<string, unknown>; subject: string };
type ServerVerdict = { subject: string; decision: PermissionExplanation['decision']; pattern: string };

/** The enabled servers of the worker's `.mcp.json`, read on this machine, as the worker reads them. */
async function readMcpServers(worker: WorkerInfo): Promise<{ file: string; servers: McpServer[] }> {
  const file = join(worker.workdir, '.mcp.json');
  const text = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    throw new MolfError(
      'not_found',
      error.code === 'ENOENT'
        ? `no .mcp.json in ${worker.workdir} (the workdir of worker ${worker.name}) on this machine`
        : `cannot read ${file}: ${error.message}`,
    );
  });
  const parsed = parseMcpConfigEntries(text, { env: process.env, workdir: worker.workdir, file });
  if (!parsed.ok) throw new MolfError('config_invalid', parsed.error);
  return {
    file,
    servers: parsed.entries.map(({ config, definition }) => ({
      name: config.name,
      definition,
      subject: toMcpServerSubject({ name: config.name, definition }),
    })),
  };
}

/** Asks on the terminal; anything but y/yes is a no. */
async function confirm(question: string): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stdout });
  try {
    return /^y(es)?$/i.test((await rl.question(question)).trim());
  } finally {
    rl.close();
  }
}

/** Adds the allow rules through `permissions.write`, redoing the edit if the file changed meanwhile. */
async function saveAllowRules(client: MolfClient, options: { worker: WorkerInfo; patterns: string[] }) {
  for (let attempt = 1; ; attempt += 1) {
    const info = await client.rpc.permissions.show.query({ workerId: options.worker.workerId });
    const edited = addAllowRules(info.text, {
      tool: MCP_SERVER_TOOL,
      patterns: options.patterns,
      placement: 'before-denies',
    });
    if (!edited.ok) throw new MolfError('permissions_invalid', `${info.path}: ${edited.message}`);
    try {
      return await client.rpc.permissions.write.mutate({
        workerId: options.worker.workerId,
        text: edited.text,
        baseVersion: info.version,
      });
    } catch (error) {
      const code = (error as { data?: { code?: string } }).data?.code;
      if (code !== 'conflict' || attempt >= SAVE_ATTEMPTS) throw error;
    }
  }
}

const LABELS: Record<PermissionExplanation['decision'], string> = {
  allow: 'already allowed',
  ask: 'to trust',
  deny: 'denied by a rule; left as it is',
};

async function trust(options: TrustOptions): Promise<void> {
  const connection = await resolveClientConnection(options);
  await using client = await connectClient(connection);
  const worker = pickWorker(await client.rpc.workers.list.query(), { worker: options.worker, cwd: process.cwd() });
  const { file, servers } = await readMcpServers(worker);
  const out = (text: string) => process.stdout.write(text);
  if (servers.length === 0) {
    out(`no enabled MCP servers in ${file}\n`);
    return;
  }
  const verdicts: ServerVerdict[] = [];
  for (const server of servers) {
    // The server judges with the worker's rules, so that what is shown is what the gate will decide.
    const explanation = await client.rpc.permissions.explain.query({
      workerId: worker.workerId,
      tool: MCP_SERVER_TOOL,
      args: { name: server.name, definition: server.definition },
    });
    verdicts.push({
      subject: server.subject,
      decision: explanation.decision,
      pattern: explanation.alwaysPatterns?.[0] ?? escapeGlob(server.subject),
    });
  }
  out(`MCP servers of ${file} (worker ${worker.name}):\n`);
  for (const verdict of verdicts) out(`  ${verdict.subject}\n      ${LABELS[verdict.decision]}\n`);
  const toTrust = verdicts.filter((verdict) => verdict.decision === 'ask');
  if (toTrust.length === 0) {
    out('nothing to trust: every server is already allowed, or denied by a rule\n');
    return;
  }
  const count = `${toTrust.length} server${toTrust.length === 1 ? '' : 's'}`;
  if (options.yes !== true) {
    if (process.stdin.isTTY !== true) {
      throw new MolfError(
        'invalid_input',
        'stdin is not a terminal, so nobody can confirm: check the commands above and pass --yes to trust them',
      );
    }
    if (!(await confirm(`Start ${count} with exactly these commands without asking? [y/N] `))) {
      out('nothing saved\n');
      return;
    }
  }
  const saved = await saveAllowRules(client, { worker, patterns: toTrust.map((verdict) => verdict.pattern) });
  out(
    `trusted ${count}; saved to ${saved.path}. A server waiting for approval starts now; ` +
      'a later change of its definition in .mcp.json asks again.\n',
  );
}

/** `molf mcp trust`: pre-approves the servers of the project's current `.mcp.json` for its worker. */
export function registerMcpTrustCommand(mcp: Command): void {
  mcp
    .command('trust')
    .description(
      "approve the servers of this project's .mcp.json, exactly as they are now, for the worker serving it " +
        '(saved as "mcp.server" allow rules in its permissions.jsonc; a changed definition asks again)',
    )
    .addOption(serverUrlOption())
    .addOption(new Option('--token <token>', 'client token').env('MOLF_CLIENT_TOKEN'))
    .option('--worker <id-or-name>', 'the worker (default: the one running on this directory)')
    .option('--yes', 'do not ask for confirmation (needed when stdin is not a terminal)')
    .action(trust);
}

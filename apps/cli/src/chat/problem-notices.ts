import type { MolfClient } from '@molf/client';
import type { McpServerInfo, PermissionsProblem, WorkerEvent, WorkerInfo } from '@molf/protocol';
import { showControlCharacters, showControlCharactersIn } from '../terminal/show-control-characters.ts';
import type { TerminalStyle } from '../terminal/terminal-style.ts';

/** The banner for a worker's rules file that does not parse: where, why, what the gate does meanwhile. */
export function formatPermissionsProblem(reported: PermissionsProblem, style: TerminalStyle): string {
  const problem = showControlCharactersIn(reported);
  const meanwhile =
    problem.fallback === 'last_good_rules'
      ? 'the last rules that parsed apply until it is fixed'
      : 'every tool call asks until it is fixed';
  return [
    style.fail(`⚠ permissions.jsonc is broken at line ${problem.line}, column ${problem.column}: ${problem.message}`),
    style.dim(`  ${problem.file}: ${meanwhile}; it is read again when it changes (molf permissions edit opens it)`),
  ].join('\n');
}

/** One line for an MCP server that is not there, with what to do; none for one that is. */
export function formatMcpProblem(reported: McpServerInfo, style: TerminalStyle): string | undefined {
  // A server's reason can carry what its process wrote: shown, never written to the terminal as it is.
  const server = showControlCharactersIn(reported);
  const why = server.reason === undefined ? '' : `: ${server.reason}`;
  switch (server.status) {
    case 'offline':
      return style.warn(
        `! MCP server ${server.name} is offline${why} — it is retried; check its command or URL in .mcp.json`,
      );
    case 'invalid':
      return style.warn(
        `! MCP server ${server.name} cannot start${why} — fix it in .mcp.json (it is read again on change)`,
      );
    case 'denied':
      return style.dim(`MCP server ${server.name} was denied; it asks again when its definition in .mcp.json changes`);
    default:
      return undefined;
  }
}

/** One line for a worker that is not online. */
export function formatWorkerOffline(reported: Pick<WorkerInfo, 'name' | 'workdir'>, style: TerminalStyle): string {
  const worker = showControlCharactersIn(reported);
  return style.warn(
    `! worker ${worker.name} (${worker.workdir}) is offline — prompts wait for it; start it with \`molf worker\` in that directory or \`molf up\``,
  );
}

/**
 * What is wrong before the first prompt, one notice each: the session's worker offline, its rules
 * file broken, an MCP server down, no key for the model prompts would use.
 */
export async function describeProblems(
  client: MolfClient,
  options: { workerId: string; model: string | undefined },
  style: TerminalStyle,
): Promise<{ lines: string[]; worker: WorkerInfo | undefined }> {
  const lines: string[] = [];
  const [workers, models] = await Promise.all([
    client.rpc.workers.list.query(),
    client.rpc.models.list.query().catch(() => undefined),
  ]);
  const worker = workers.find((one) => one.workerId === options.workerId);
  if (worker !== undefined) {
    if (worker.state !== 'online') lines.push(formatWorkerOffline(worker, style));
    if (worker.permissionsProblem !== undefined) lines.push(formatPermissionsProblem(worker.permissionsProblem, style));
    for (const server of worker.mcpServers ?? []) {
      const line = formatMcpProblem(server, style);
      if (line !== undefined) lines.push(line);
    }
  }
  const model = options.model ?? models?.defaultModel;
  if (models !== undefined) {
    if (model === undefined) {
      lines.push(style.warn('! no model is set — pass --model provider/model, or set a default model in the config'));
    } else {
      const provider = models.providers.find((one) => one.name === model.split('/')[0]);
      if (provider === undefined) {
        lines.push(
          style.warn(
            `! no provider "${model.split('/')[0]}" for the model ${model} — check the name (/model changes it)`,
          ),
        );
      } else if (!provider.configured) {
        lines.push(
          style.warn(`! the model ${model} has no key — ${provider.hint ?? `configure the provider ${provider.name}`}`),
        );
      }
    }
  }
  return { lines, worker };
}

/**
 * The notices a change of the chat's worker calls for, given how it was before (undefined: the
 * subscription's first look, which the notices at start already covered): it went offline or came
 * back, an MCP server went down or cannot start, or is back. The rules file has its own events.
 */
export function workerChangeNotices(
  before: WorkerInfo | undefined,
  event: WorkerEvent,
  style: TerminalStyle,
): string[] {
  const { worker } = event;
  if (before === undefined) return [];
  const lines: string[] = [];
  // By the state, whatever the event's type: a registration also comes as a change.
  if (before.state === 'online' && worker.state !== 'online') {
    lines.push(formatWorkerOffline(worker, style));
    return lines;
  }
  if (before.state !== 'online' && worker.state === 'online') {
    lines.push(style.ok(`✓ worker ${showControlCharacters(worker.name)} is online again`));
  }
  const previous = new Map((before.mcpServers ?? []).map((server) => [server.name, server]));
  for (const server of worker.mcpServers ?? []) {
    const was = previous.get(server.name);
    if (was?.status === server.status && was.reason === server.reason) continue;
    const problem = formatMcpProblem(server, style);
    if (problem !== undefined) lines.push(problem);
    else if (server.status === 'connected' && was !== undefined && formatMcpProblem(was, style) !== undefined) {
      lines.push(style.ok(`✓ MCP server ${showControlCharacters(server.name)} is connected again`));
    }
  }
  return lines;
}

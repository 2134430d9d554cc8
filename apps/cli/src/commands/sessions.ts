import { createInterface } from 'node:readline/promises';
import type { MolfClient } from '@molf/client/node';
import { MolfError, type SessionInfo, type UsageTotals, type WorkerInfo } from '@molf/protocol';
import { type Command, InvalidArgumentError, Option } from 'commander';
import { serverUrlOption } from '../cli-options.ts';
import { connectClient } from '../connect-client.ts';
import { USAGE_EXIT_CODE } from '../exit-codes.ts';
import { type ClientConnectionOptions, resolveClientConnection } from '../resolve-client-connection.ts';
import { formatSessionHistory } from '../sessions/format-history.ts';
import { showControlCharacters } from '../terminal/show-control-characters.ts';
import { styleFor } from '../terminal/terminal-style.ts';
import { formatTable } from './format-table.ts';

/** Sessions listed per page by default. */
const LIST_PAGE = 20;
/** The most `sessions.list` gives at once. */
const MAX_LIST_PAGE = 200;
/** Messages `show` prints by default: the session's end; older ones a page at a time. */
const SHOW_PAGE = 50;

type ConnectionFlags = ClientConnectionOptions;

function parseCount(max: number) {
  return (value: string): number => {
    const count = Number(value);
    if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(count) || count < 1 || count > max) {
      throw new InvalidArgumentError(`give a whole number from 1 to ${max}`);
    }
    return count;
  };
}

function parseIndex(value: string): number {
  const index = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(index)) {
    throw new InvalidArgumentError('give a whole number, 0 or more');
  }
  return index;
}

/** The flags every subcommand takes to reach the server. */
function withConnection(command: Command): Command {
  return command
    .addOption(serverUrlOption())
    .addOption(new Option('--token <token>', 'client token').env('MOLF_CLIENT_TOKEN'));
}

async function connect(options: ConnectionFlags): Promise<MolfClient> {
  return connectClient(await resolveClientConnection(options));
}

export function registerSessionsCommand(program: Command): void {
  const sessions = program
    .command('sessions')
    .description("the sessions on the server: list them, show one's history, rename or remove them");

  withConnection(
    sessions
      .command('list', { isDefault: true })
      .alias('ls')
      .description('list sessions, last active first, a page at a time')
      .option('--worker <id-or-name>', "only this worker's sessions")
      .addOption(
        new Option('--limit <n>', `sessions per page (at most ${MAX_LIST_PAGE})`)
          .argParser(parseCount(MAX_LIST_PAGE))
          .default(LIST_PAGE),
      )
      .addOption(
        new Option('--offset <n>', 'skip this many (the next page starts where this one ends)')
          .argParser(parseIndex)
          .default(0),
      )
      .option('--subagents', "list subagents' sessions too (default: only the sessions people started)")
      .option('--json', 'print JSON: the page, the total and the next offset'),
  ).action(listSessions);

  withConnection(
    sessions
      .command('show')
      .description("print a session's history as `molf chat` does when it resumes it (tool output collapsed)")
      .argument('<session-id>')
      .addOption(
        new Option('--limit <n>', `messages to print, from the end (default ${SHOW_PAGE})`).argParser(
          parseCount(100_000),
        ),
      )
      .addOption(
        new Option('--before <index>', 'print the messages before this one (an earlier page)').argParser(parseIndex),
      )
      .addOption(new Option('--all', 'print the whole history').conflicts(['limit', 'before']))
      .option('--json', 'print JSON: the session, its messages, their start and the total'),
  ).action(showSession);

  withConnection(
    sessions.command('rename').description('rename a session').argument('<session-id>').argument('<name>'),
  ).action(renameSession);

  withConnection(
    sessions
      .command('rm')
      .alias('delete')
      .description("remove sessions and their subagents' sessions (asks first on a terminal)")
      .argument('<session-id...>')
      .option('-y, --yes', 'remove without asking (needed when stdin is not a terminal)'),
  ).action(removeSessions);
}

/** A time as people read it, in the local zone: `2025-11-24 14:03`. */
function localTime(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const two = (value: number) => String(value).padStart(2, '0');
  return `${date.getFullYear()}-${two(date.getMonth() + 1)}-${two(date.getDate())} ${two(date.getHours())}:${two(date.getMinutes())}`;
}

/** The worker `--worker` names, by id or by name; an error listing the known ones otherwise. */
function findWorker(workers: readonly WorkerInfo[], wanted: string): WorkerInfo {
  const byId = workers.find((worker) => worker.workerId === wanted);
  if (byId !== undefined) return byId;
  const byName = workers.filter((worker) => worker.name === wanted);
  if (byName.length === 1 && byName[0] !== undefined) return byName[0];
  const known = workers.map((worker) => `${worker.name} (${worker.workerId})`).join(', ');
  throw new MolfError(
    'worker_not_found',
    byName.length > 1
      ? `${byName.length} workers are named ${wanted}: give the id (${known})`
      : `no worker ${wanted}${known === '' ? ': none has registered' : `; the workers: ${known}`}`,
    { field: 'workerId' },
  );
}

async function listSessions(
  options: ConnectionFlags & { worker?: string; limit: number; offset: number; subagents?: boolean; json?: boolean },
): Promise<void> {
  await using client = await connect(options);
  const workers = await client.rpc.workers.list.query();
  const worker = options.worker === undefined ? undefined : findWorker(workers, options.worker);
  const page = await client.rpc.sessions.list.query({
    ...(worker === undefined ? {} : { workerId: worker.workerId }),
    ...(options.subagents === true ? {} : { topLevel: true }),
    limit: options.limit,
    offset: options.offset,
  });
  const end = options.offset + page.sessions.length;
  const nextOffset = end < page.total ? end : null;
  if (options.json === true) {
    process.stdout.write(
      `${JSON.stringify({ sessions: page.sessions, total: page.total, offset: options.offset, limit: options.limit, nextOffset, damaged: page.damaged }, null, 2)}\n`,
    );
    return;
  }
  for (const damaged of page.damaged) {
    process.stderr.write(`molf: session ${damaged.sessionId} is damaged: ${damaged.reason}\n`);
  }
  if (page.sessions.length === 0) {
    process.stdout.write(
      page.total === 0 ? 'no sessions\n' : `no sessions past ${options.offset} (there are ${page.total})\n`,
    );
    return;
  }
  const workerNames = new Map(workers.map((known) => [known.workerId, known.name]));
  process.stdout.write(
    formatTable([
      ['ID', 'UPDATED', 'MSGS', 'STATUS', 'WORKER', 'NAME'],
      ...page.sessions.map((session) => [
        session.sessionId,
        localTime(session.updatedAt),
        String(session.messageCount),
        session.status,
        workerNames.get(session.workerId) ?? session.workerId,
        session.parent === undefined
          ? showControlCharacters(session.name)
          : `${showControlCharacters(session.name)} (${session.parent.agent} of ${session.parent.sessionId})`,
      ]),
    ]),
  );
  const shown = `${options.offset + 1}–${end} of ${page.total}`;
  process.stdout.write(
    nextOffset === null
      ? `${shown}\n`
      : `${shown}; next page: molf sessions list --offset ${nextOffset}${options.limit === LIST_PAGE ? '' : ` --limit ${options.limit}`}${options.worker === undefined ? '' : ` --worker ${options.worker}`}\n`,
  );
}

/** Tokens and cost on one line: `12,345 in · 678 out · $0.0123`. */
function formatUsage(usage: UsageTotals): string {
  const parts = [`${usage.inputTokens.toLocaleString('en')} in`, `${usage.outputTokens.toLocaleString('en')} out`];
  if (usage.costUsd !== undefined) parts.push(`$${usage.costUsd.toFixed(4)}`);
  return parts.join(' · ');
}

function sessionHeader(session: SessionInfo, workerName: string | undefined): string {
  const lines = [
    `session ${session.sessionId}: ${showControlCharacters(session.name)}`,
    `worker ${workerName === undefined ? session.workerId : `${workerName} (${session.workerId})`} · ${session.messageCount} messages · ${session.status} · created ${localTime(session.createdAt)} · updated ${localTime(session.updatedAt)}`,
  ];
  if (session.model !== undefined) lines.push(`model ${session.model}`);
  if (session.usage !== undefined) lines.push(`usage ${formatUsage(session.usage)}`);
  if (session.parent !== undefined) {
    lines.push(`the ${session.parent.agent} subagent's session of session ${session.parent.sessionId}`);
  }
  return `${lines.join('\n')}\n`;
}

async function showSession(
  sessionId: string,
  options: ConnectionFlags & { limit?: number; before?: number; all?: boolean; json?: boolean },
): Promise<void> {
  await using client = await connect(options);
  const page = await client.rpc.sessions.get.query({
    sessionId,
    ...(options.all === true ? {} : { limit: options.limit ?? SHOW_PAGE }),
    ...(options.before === undefined ? {} : { before: options.before }),
  });
  if (options.json === true) {
    process.stdout.write(`${JSON.stringify(page, null, 2)}\n`);
    return;
  }
  const style = styleFor(process.stdout);
  const workers = await client.rpc.workers.list.query();
  const workerName = workers.find((worker) => worker.workerId === page.session.workerId)?.name;
  const parts = [sessionHeader(page.session, workerName)];
  if (page.start > 0) {
    parts.push(
      style.dim(
        `… ${page.start} earlier message${page.start === 1 ? '' : 's'}: molf sessions show ${sessionId} --before ${page.start}`,
      ),
    );
    parts.push('\n');
  }
  const history = formatSessionHistory(page.messages, style);
  parts.push(history === '' ? style.dim('(no messages)\n') : history);
  const end = page.start + page.messages.length;
  if (end < page.total) {
    parts.push(
      style.dim(
        `… ${page.total - end} later message${page.total - end === 1 ? '' : 's'}: molf sessions show ${sessionId}\n`,
      ),
    );
  }
  process.stdout.write(`${parts.join('\n')}`);
}

async function renameSession(sessionId: string, name: string, options: ConnectionFlags): Promise<void> {
  await using client = await connect(options);
  const session = await client.rpc.sessions.rename.mutate({ sessionId, name });
  process.stdout.write(`renamed session ${session.sessionId}: ${showControlCharacters(session.name)}\n`);
}

async function removeSessions(
  sessionIds: string[],
  options: ConnectionFlags & { yes?: boolean },
  command: Command,
): Promise<void> {
  const ask = options.yes !== true;
  if (ask && process.stdin.isTTY !== true) {
    command.error('molf sessions rm: stdin is not a terminal to ask on: pass --yes to remove without asking', {
      exitCode: USAGE_EXIT_CODE,
    });
  }
  await using client = await connect(options);
  // Every id is checked before any is removed: a typo removes nothing.
  const found = await Promise.all(sessionIds.map((sessionId) => client.rpc.sessions.info.query({ sessionId })));
  if (ask) {
    const listed = found.map(
      (session) => `  ${session.sessionId}  ${session.messageCount} messages  ${showControlCharacters(session.name)}`,
    );
    process.stderr.write(`${listed.join('\n')}\n`);
    const prompt = createInterface({ input: process.stdin, output: process.stderr });
    let answer: string;
    try {
      answer = await prompt.question(
        `remove ${found.length === 1 ? 'this session' : `these ${found.length} sessions`} and their subagents' sessions? [y/N] `,
      );
    } finally {
      prompt.close();
    }
    if (!/^y(es)?$/i.test(answer.trim())) {
      process.stderr.write('nothing removed\n');
      return;
    }
  }
  for (const session of found) {
    await client.rpc.sessions.delete.mutate({ sessionId: session.sessionId });
    process.stdout.write(`removed session ${session.sessionId} (${showControlCharacters(session.name)})\n`);
  }
}

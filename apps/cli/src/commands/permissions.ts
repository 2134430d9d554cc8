import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { MolfClient } from '@molf/client';
import {
  createPermissionEngine,
  createReadDenial,
  describeRule,
  safeParsePermissionsFile,
  toReadRules,
} from '@molf/permissions';
import {
  MolfError,
  type PermissionExplanation,
  toResolvePathsParams,
  type WorkerId,
  type WorkerInfo,
} from '@molf/protocol';
import { createPathPolicy, resolvePathsForGate, validateWorkdir } from '@molf/worker';
import { type Command, Option } from 'commander';
import { serverUrlOption } from '../cli-options.ts';
import { connectClient } from '../connect-client.ts';
import { type ClientConnectionOptions, resolveClientConnection } from '../resolve-client-connection.ts';
import { formatGrants } from './format-grants.ts';

type ExplainOptions = { file: string; tool: string; args: string; json?: boolean; workdir: string; home: string };
type WorkerOptions = ClientConnectionOptions & { worker?: string };

function parseArgs(raw: string): Record<string, unknown> {
  let args: unknown;
  try {
    args = JSON.parse(raw);
  } catch (error) {
    throw new MolfError('invalid_input', `--args is not valid JSON: ${(error as Error).message}`);
  }
  if (typeof args !== 'object' || args === null || Array.isArray(args)) {
    throw new MolfError('invalid_input', '--args must be a JSON object, e.g. \'{"command": "git status"}\'');
  }
  return args as Record<string, unknown>;
}

/** Evaluates one call against a rules file on this machine: no server needed. */
async function explainLocally(options: ExplainOptions): Promise<PermissionExplanation> {
  const args = parseArgs(options.args);
  const text = await readFile(options.file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    throw new MolfError('not_found', `cannot read ${options.file}: ${error.message}`);
  });
  const parsed = safeParsePermissionsFile(text);
  if (!parsed.ok) {
    throw new MolfError(
      'permissions_invalid',
      `${options.file}:${parsed.error.line}:${parsed.error.column}: ${parsed.error.message} (the gate would use its last good rules, or ask for everything)`,
    );
  }
  const workdir = await validateWorkdir(options.workdir);
  const paths = await createPathPolicy({ workdir });
  const engine = await createPermissionEngine();
  // Where the call's paths lead in the workdir, as the gate asks the worker: links followed, the
  // globs of a shell line expanded.
  const wanted = engine.pathArguments({ tool: options.tool, args, home: options.home });
  // The rules as they stand now: a grant past its `expires` no longer applies.
  const now = Date.now();
  const canonical = new Map<string, readonly string[]>();
  const trees = new Map<string, readonly string[]>();
  if (wanted.length > 0) {
    // As the gate: at most what one path check takes of each kind; the rest count as unresolved (ask).
    const { params, unsent } = toResolvePathsParams(wanted);
    for (const path of unsent.paths) canonical.set(path, []);
    for (const path of unsent.trees) trees.set(path, []);
    const answer = await resolvePathsForGate(
      paths,
      params,
      createReadDenial(toReadRules({ rules: parsed.rules, home: options.home, now })),
    );
    for (const entry of answer.paths) canonical.set(entry.given, entry.forms);
    for (const entry of answer.trees ?? []) trees.set(entry.given, entry.forms);
  }
  const evaluation = engine.evaluate({
    now,
    tool: options.tool,
    args,
    layers: { file: parsed.rules },
    home: options.home,
    canonicalPaths: (path) => canonical.get(path),
    treeContents: (path) => trees.get(path),
  });
  const { decision } = evaluation;
  return {
    decision: decision.type,
    reason:
      decision.type === 'ask'
        ? decision.reason
        : `${decision.type === 'allow' ? 'allowed' : 'denied'} by ${describeRule(decision.rule)}`,
    subjects: evaluation.verdicts.map(({ subject, decision: verdict }) => ({
      kind: subject.kind,
      label: subject.label,
      decision: verdict.type,
      ...(verdict.rule === undefined ? {} : { rule: describeRule(verdict.rule) }),
    })),
    problems: evaluation.problems,
    alwaysPatterns: evaluation.alwaysPatterns,
    ...(evaluation.alwaysNote === undefined ? {} : { alwaysNote: evaluation.alwaysNote }),
  };
}

export function formatExplanation(explanation: PermissionExplanation): string {
  const lines = [`decision: ${explanation.decision}`, `because:  ${explanation.reason}`];
  if (explanation.subjects.length > 0) {
    lines.push('subjects:');
    for (const subject of explanation.subjects) {
      lines.push(`  ${subject.decision.padEnd(5)}  ${subject.kind.padEnd(7)}  ${subject.label}`);
      lines.push(`         ${subject.rule === undefined ? 'no rule matches' : `rule ${subject.rule}`}`);
    }
  }
  for (const problem of explanation.problems) lines.push(`problem:  ${problem}`);
  lines.push(
    explanation.alwaysPatterns === null
      ? 'always:   not offered (no pattern describes this call safely)'
      : explanation.alwaysPatterns.length === 0
        ? 'always:   nothing to save (nothing asks)'
        : `always:   would allow ${explanation.alwaysPatterns.map((pattern) => JSON.stringify(pattern)).join(', ')}`,
  );
  if (explanation.alwaysNote !== undefined) lines.push(`          ${explanation.alwaysNote}`);
  return `${lines.join('\n')}\n`;
}

async function connect(options: WorkerOptions): Promise<MolfClient> {
  return connectClient(await resolveClientConnection(options));
}

/** The worker a command is about: `--worker` (id or name), else the one whose workdir holds the cwd. */
export function pickWorker(
  workers: readonly WorkerInfo[],
  options: { worker?: string | undefined; cwd: string },
): WorkerInfo {
  if (options.worker !== undefined) {
    const matches = workers.filter((worker) => worker.workerId === options.worker || worker.name === options.worker);
    if (matches.length === 1) return matches[0] as WorkerInfo;
    throw new MolfError(
      'worker_not_found',
      matches.length === 0
        ? `no worker with id or name "${options.worker}"; \`molf workers\` lists them`
        : `${matches.length} workers are named "${options.worker}": pass the id instead`,
    );
  }
  const containing = workers
    .filter((worker) => options.cwd === worker.workdir || options.cwd.startsWith(`${worker.workdir}/`))
    .sort((a, b) => b.workdir.length - a.workdir.length);
  const chosen = containing[0] ?? (workers.length === 1 ? workers[0] : undefined);
  if (chosen === undefined) {
    throw new MolfError(
      'worker_not_found',
      'no worker runs on this directory: pass --worker <id or name> (see `molf workers`)',
    );
  }
  return chosen;
}

async function withWorker<T>(
  options: WorkerOptions,
  task: (client: MolfClient, workerId: WorkerId) => Promise<T>,
): Promise<T> {
  await using client = await connect(options);
  const worker = pickWorker(await client.rpc.workers.list.query(), { worker: options.worker, cwd: process.cwd() });
  // Awaited here: the client is disposed when this function returns.
  return await task(client, worker.workerId);
}

function runEditor(file: string): void {
  const editor = process.env.VISUAL ?? process.env.EDITOR ?? 'vi';
  // The editor setting may carry its own arguments (`code --wait`), so a shell runs it.
  const result = spawnSync('/bin/sh', ['-c', `${editor} "$1"`, 'molf-editor', file], { stdio: 'inherit' });
  if (result.error !== undefined || result.status !== 0) {
    throw new MolfError(
      'internal',
      `the editor (${editor}) failed${result.error === undefined ? ` with exit code ${result.status}` : `: ${result.error.message}`}`,
    );
  }
}

const clientOptions = (command: Command) =>
  command
    .addOption(serverUrlOption())
    .addOption(new Option('--token <token>', 'client token').env('MOLF_CLIENT_TOKEN'))
    .option('--worker <id-or-name>', 'the worker (default: the one running on this directory)');

/** Says on stderr that the worker's file is broken (the listing is of the last good rules), and fails the command. */
function reportProblem(problem: { line: number; column: number; message: string } | undefined): void {
  if (problem === undefined) return;
  process.stderr.write(
    `molf permissions: this file is invalid at line ${problem.line}, column ${problem.column}: ${problem.message}\n`,
  );
  process.exitCode = 1;
}

export function registerPermissionsCommand(program: Command): void {
  const permissions = program
    .command('permissions')
    .description(
      "a worker's approval rules (permissions.jsonc): explain a decision, show or edit the rules, list or revoke grants",
    );

  permissions
    .command('explain')
    .description('evaluate one tool call against a rules file and tell which rule decides it')
    .requiredOption('--file <path>', 'the permissions.jsonc to evaluate against')
    .requiredOption('--tool <name>', 'tool name, e.g. shell_exec, read_file, or an MCP tool')
    .option('--args <json>', 'the call arguments as a JSON object', '{}')
    .addOption(
      new Option('--workdir <dir>', 'the workdir paths are resolved in').default(process.cwd(), 'current directory'),
    )
    .addOption(new Option('--home <dir>', 'what ~ and $HOME mean').default(homedir(), 'your home directory'))
    .option('--json', 'print JSON')
    .action(async (options: ExplainOptions) => {
      const explanation = await explainLocally({ ...options, file: resolve(options.file) });
      process.stdout.write(
        options.json === true ? `${JSON.stringify(explanation, null, 2)}\n` : formatExplanation(explanation),
      );
    });

  clientOptions(permissions.command('show').description("print a worker's permissions.jsonc as the server holds it"))
    .option('--json', 'print JSON (path, text, problem)')
    .action(async (options: WorkerOptions & { json?: boolean }) => {
      await withWorker(options, async (client, workerId) => {
        const info = await client.rpc.permissions.show.query({ workerId });
        if (options.json === true) {
          process.stdout.write(`${JSON.stringify(info, null, 2)}\n`);
          return;
        }
        process.stdout.write(`// ${info.path}\n${info.text}${info.text.endsWith('\n') ? '' : '\n'}`);
        reportProblem(info.problem);
      });
    });

  clientOptions(
    permissions
      .command('grants')
      .description(
        'list the grants "always" answers saved in a worker\'s rules: pattern, expiry, when, by whom, from which client, for which call',
      ),
  )
    .option('--json', 'print JSON (every field, subjects whole)')
    .option('--prune', 'revoke every grant that has expired, then list the rest')
    .action(async (options: WorkerOptions & { json?: boolean; prune?: boolean }) => {
      await withWorker(options, async (client, workerId) => {
        let listed = await client.rpc.permissions.grants.query({ workerId });
        if (options.prune === true) {
          const expired = listed.grants.filter((grant) => grant.expired);
          for (const grant of expired) {
            await client.rpc.permissions.revoke.mutate({ workerId, grantId: grant.grantId });
          }
          if (options.json !== true)
            process.stdout.write(`revoked ${expired.length} expired grant${expired.length === 1 ? '' : 's'}\n`);
          listed = await client.rpc.permissions.grants.query({ workerId });
        }
        process.stdout.write(options.json === true ? `${JSON.stringify(listed, null, 2)}\n` : formatGrants(listed));
        reportProblem(listed.problem);
      });
    });

  clientOptions(
    permissions
      .command('revoke')
      .description(
        "take back a grant: remove its rule from the worker's permissions.jsonc; the next call it covered asks",
      ),
  )
    .argument('<grant-id>', 'the id `molf permissions grants` lists (g_…)')
    .action(async (grantId: string, options: WorkerOptions) => {
      await withWorker(options, async (client, workerId) => {
        const revoked = await client.rpc.permissions.revoke.mutate({ workerId, grantId });
        process.stdout.write(
          `revoked ${revoked.grantId}: "${revoked.tool}" → ${JSON.stringify(revoked.pattern)} is no longer allowed by it\n`,
        );
      });
    });

  clientOptions(
    permissions
      .command('edit')
      .description("edit a worker's permissions.jsonc in $VISUAL or $EDITOR; the server checks it before saving"),
  ).action(async (options: WorkerOptions) => {
    await withWorker(options, async (client, workerId) => {
      const info = await client.rpc.permissions.show.query({ workerId });
      const directory = await mkdtemp(join(tmpdir(), 'molf-permissions-'));
      const file = join(directory, 'permissions.jsonc');
      let keep = false;
      try {
        await writeFile(file, info.text, { mode: 0o600 });
        runEditor(file);
        const edited = await readFile(file, 'utf8');
        if (edited === info.text) {
          process.stdout.write('no changes\n');
          return;
        }
        const parsed = safeParsePermissionsFile(edited);
        if (!parsed.ok) {
          keep = true;
          throw new MolfError(
            'permissions_invalid',
            `not saved: line ${parsed.error.line}, column ${parsed.error.column}: ${parsed.error.message}; your edit is kept in ${file}`,
          );
        }
        // The version makes the server refuse the save if an "always" answer changed the file meanwhile.
        const saved = await client.rpc.permissions.write.mutate({ workerId, text: edited, baseVersion: info.version });
        process.stdout.write(`saved ${saved.path} (${parsed.rules.length} rules); it applies to the next tool call\n`);
      } finally {
        if (!keep) await rm(directory, { recursive: true, force: true });
      }
    });
  });
}

import type { MolfClient } from '@molf/client';
import {
  type CronAddInput,
  type CronJob,
  describeCronSchedule,
  ErrorDataSchema,
  formatUtcTime,
  MolfError,
  parseDuration,
  type WorkerInfo,
} from '@molf/protocol';
import { type Command, InvalidArgumentError, Option } from 'commander';
import { serverUrlOption } from '../cli-options.ts';
import { connectClient } from '../connect-client.ts';
import { type ClientConnectionOptions, resolveClientConnection } from '../resolve-client-connection.ts';
import { describeCronTarget, formatCronJobs } from './format-cron-jobs.ts';
import { pickWorker } from './permissions.ts';

type WorkerOptions = ClientConnectionOptions & { worker?: string };
type JsonOption = { json?: boolean };

type AddOptions = WorkerOptions &
  JsonOption & {
    every?: string;
    anchor?: string;
    at?: string;
    cron?: string;
    tz?: string;
    name?: string;
    session?: string;
    model?: string;
    onAsk?: 'deny' | 'wait';
    onAskWait?: number;
    missed?: 'run_once' | 'skip';
    until?: string;
    maxRuns?: number;
    paused?: boolean;
  };

const SCHEDULE_FLAGS = ['every', 'at', 'cron'] as const;

/** The flag each field of `cron.add` comes from: a refused field is named as the person wrote it. */
const FLAG_OF_FIELD: Readonly<Record<string, string>> = {
  'schedule.every': '--every',
  'schedule.anchor': '--anchor',
  'schedule.at': '--at',
  'schedule.cron': '--cron',
  'schedule.tz': '--tz',
  name: '--name',
  session: '--session',
  model: '--model',
  onAsk: '--on-ask',
  onAskWaitMs: '--on-ask-wait',
  missed: '--missed',
  until: '--until',
  maxRuns: '--max-runs',
  prompt: 'the prompt',
  workerId: '--worker',
};

/** `--on-ask-wait`: a duration (`30s`, `10m`, `1.5h`), from 1 s to 24 h (the server's bounds), in ms. */
function parseWaitDuration(text: string): number {
  let ms: number;
  try {
    ms = parseDuration(text, '--on-ask-wait');
  } catch (error) {
    throw new InvalidArgumentError((error as Error).message.replace(/^--on-ask-wait: /, ''));
  }
  if (ms < 1_000 || ms > 24 * 3_600_000) throw new InvalidArgumentError('give from 1s to 24h');
  return ms;
}

function parseMaxRuns(text: string): number {
  const runs = Number(text);
  if (!/^\d+$/.test(text.trim()) || !Number.isSafeInteger(runs) || runs < 1) {
    throw new InvalidArgumentError('give a whole number of runs, 1 or more');
  }
  return runs;
}

/**
 * An RPC error about one input field, told with the flag it came from (`--every: "5x" has an
 * unknown unit…`); other errors as they are.
 */
function namingTheFlag(error: unknown): unknown {
  const data = ErrorDataSchema.safeParse((error as { data?: unknown } | undefined)?.data);
  if (!data.success || data.data.field === undefined) return error;
  const { code, field } = data.data;
  const flag = FLAG_OF_FIELD[field];
  if (flag === undefined) return error;
  const message = (error as Error).message;
  // The server's schedule messages start with the field's path, which means nothing on a command line.
  const text = message.startsWith(`${field}: `) ? message.slice(field.length + 2) : message;
  return new MolfError(code, `${flag}: ${text}`, { cause: error, field });
}

/** The schedule as written: exactly one of `--every`, `--at` and `--cron`, else an error saying which to give. */
function scheduleOf(options: AddOptions): CronAddInput['schedule'] {
  const given = SCHEDULE_FLAGS.filter((flag) => options[flag] !== undefined);
  if (given.length !== 1) {
    throw new MolfError(
      'invalid_input',
      given.length === 0
        ? 'give a schedule: --every DURATION, --at TIME|DURATION or --cron EXPRESSION'
        : `give one schedule, not ${given.map((flag) => `--${flag}`).join(' and ')}: --every, --at or --cron`,
      { field: 'schedule' },
    );
  }
  return {
    ...(options.every === undefined ? {} : { every: options.every }),
    ...(options.anchor === undefined ? {} : { anchor: options.anchor }),
    ...(options.at === undefined ? {} : { at: options.at }),
    ...(options.cron === undefined ? {} : { cron: options.cron }),
    ...(options.tz === undefined ? {} : { tz: options.tz }),
  };
}

function toAddInput(workerId: WorkerInfo['workerId'], prompt: string, options: AddOptions): CronAddInput {
  return {
    workerId,
    schedule: scheduleOf(options),
    prompt,
    ...(options.name === undefined ? {} : { name: options.name }),
    ...(options.session === undefined ? {} : { session: options.session }),
    ...(options.model === undefined ? {} : { model: options.model }),
    ...(options.onAsk === undefined ? {} : { onAsk: options.onAsk }),
    ...(options.onAskWait === undefined ? {} : { onAskWaitMs: options.onAskWait }),
    ...(options.missed === undefined ? {} : { missed: options.missed }),
    ...(options.until === undefined ? {} : { until: options.until }),
    ...(options.maxRuns === undefined ? {} : { maxRuns: options.maxRuns }),
    ...(options.paused === true ? { enabled: false } : {}),
  };
}

async function withClient<T>(options: ClientConnectionOptions, task: (client: MolfClient) => Promise<T>): Promise<T> {
  await using client = await connectClient(await resolveClientConnection(options));
  try {
    // Awaited here: the client is disposed when this function returns.
    return await task(client);
  } catch (error) {
    throw namingTheFlag(error);
  }
}

function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

function nextRunText(job: CronJob): string {
  return job.nextRunAt === undefined ? 'no next run' : `next run ${formatUtcTime(job.nextRunAt)}`;
}

function title(job: CronJob): string {
  return `${job.jobId} "${job.name}"`;
}

const clientOptions = (command: Command) =>
  command
    .addOption(serverUrlOption())
    .addOption(new Option('--token <token>', 'client token').env('MOLF_CLIENT_TOKEN'));

const workerOption = (command: Command) =>
  command.option('--worker <id-or-name>', 'the worker (default: the one running on this directory)');

export function registerCronCommand(program: Command): void {
  const cron = program
    .command('cron')
    .description("scheduled prompts on a worker: list, add, remove, pause, resume or run a worker's cron jobs now");

  workerOption(clientOptions(cron.command('list').description("list a worker's cron jobs")))
    .option('--json', 'print the jobs as JSON (with nextRunAt and lastRun)')
    .action(async (options: WorkerOptions & JsonOption) => {
      await withClient(options, async (client) => {
        const worker = pickWorker(await client.rpc.workers.list.query(), {
          worker: options.worker,
          cwd: process.cwd(),
        });
        const jobs = await client.rpc.cron.list.query({ workerId: worker.workerId });
        if (options.json === true) printJson(jobs);
        else process.stdout.write(formatCronJobs(jobs, { workerName: worker.name }));
      });
    });

  workerOption(
    clientOptions(
      cron
        .command('add')
        .description(
          'schedule a prompt on a worker: exactly one of --every, --at and --cron; each run sends the prompt ' +
            'into a new session (or --session) as if you typed it',
        ),
    ),
  )
    .argument('<prompt>', 'what to ask at each run')
    .option('--every <duration>', 'run every 30m, 2h, 1d… (at least 1m)')
    .option('--anchor <time>', 'with --every: an ISO 8601 time the runs are counted from (default: now)')
    .option('--at <time-or-duration>', 'run once: an ISO 8601 time with Z or an offset, or a duration from now (20m)')
    .option('--cron <expression>', 'run on a 5- or 6-field cron expression, e.g. "0 9 * * 1-5"')
    .option('--tz <zone>', "with --cron: the IANA time zone it is read in (default: the server's)")
    .option('--name <name>', 'a short name (default: the schedule and the first line of the prompt)')
    .option('--session <id-or-new>', 'the session runs go into, or "new" for a new session per run (default: new)')
    .option('--model <provider/model>', "the model of each run (default: the session's)")
    .addOption(
      new Option(
        '--on-ask <policy>',
        'a tool call that needs approval: deny unless somebody watches (the default), or wait for a person',
      ).choices(['deny', 'wait']),
    )
    .addOption(
      new Option(
        '--on-ask-wait <duration>',
        'how long a question waits for a person, 1s to 24h (default: 10m)',
      ).argParser(parseWaitDuration),
    )
    .addOption(
      new Option(
        '--missed <policy>',
        'slots missed while the server was down: run_once (the default: one run for all), or skip them',
      ).choices(['run_once', 'skip']),
    )
    .option('--until <time-or-duration>', 'no run after this: an ISO 8601 time, or a duration from now (3d)')
    .addOption(new Option('--max-runs <n>', 'no run after this many').argParser(parseMaxRuns))
    .option('--paused', 'add it paused (`molf cron resume` starts it)')
    .option('--json', 'print the job as JSON')
    .action(async (prompt: string, options: AddOptions) => {
      // Checked before connecting: a mistyped schedule needs no server to be told.
      scheduleOf(options);
      await withClient(options, async (client) => {
        const worker = pickWorker(await client.rpc.workers.list.query(), {
          worker: options.worker,
          cwd: process.cwd(),
        });
        const job = await client.rpc.cron.add.mutate(toAddInput(worker.workerId, prompt, options));
        if (options.json === true) {
          printJson(job);
          return;
        }
        process.stdout.write(
          `added ${title(job)}: ${describeCronSchedule(job.schedule)}, ${
            job.enabled ? nextRunText(job) : `paused (\`molf cron resume ${job.jobId}\` starts it)`
          }; runs go into ${job.target.type === 'new' ? 'a new session each' : `session ${describeCronTarget(job)}`}\n`,
        );
      });
    });

  clientOptions(cron.command('rm').description('remove a cron job; its runs so far stay in their sessions'))
    .argument('<job-id>', 'the id `molf cron list` shows (cj_…)')
    .option('--json', 'print JSON ({ jobId, removed })')
    .action(async (jobId: string, options: ClientConnectionOptions & JsonOption) => {
      await withClient(options, async (client) => {
        // An unknown id is refused by the server (job_not_found).
        const { removed } = await client.rpc.cron.remove.mutate({ jobId });
        if (options.json === true) printJson({ jobId, removed });
        else process.stdout.write(`removed ${jobId}\n`);
      });
    });

  workerOption(
    clientOptions(
      cron
        .command('heartbeat')
        .description(
          "turn the worker's heartbeat on or off: every --every (default 30m) the model goes through the checklist " +
            "in the project's HEARTBEAT.md (skipped when it has none) and you hear only of what needs attention",
        ),
    ),
  )
    .argument('<on-or-off>', 'on or off')
    .option('--every <duration>', 'how often, when on (default 30m)')
    .option('--json', 'print the heartbeat job as JSON (null when off)')
    .action(async (state: string, options: WorkerOptions & JsonOption & { every?: string }) => {
      if (state !== 'on' && state !== 'off') {
        throw new MolfError('invalid_input', `say on or off, not "${state}"`);
      }
      await withClient(options, async (client) => {
        const worker = pickWorker(await client.rpc.workers.list.query(), {
          worker: options.worker,
          cwd: process.cwd(),
        });
        const job = await client.rpc.cron.heartbeat
          .mutate({
            workerId: worker.workerId,
            enabled: state === 'on',
            ...(options.every === undefined ? {} : { every: options.every }),
          })
          .catch((error: unknown) => {
            throw namingTheFlag(error);
          });
        if (options.json === true) printJson(job);
        else if (job === null) process.stdout.write(`heartbeat off on worker ${worker.name}\n`);
        else {
          process.stdout.write(
            `heartbeat on for worker ${worker.name}: ${describeCronSchedule(job.schedule)}, ${nextRunText(job)}; ` +
              `it reads HEARTBEAT.md in the project (${title(job)})\n`,
          );
        }
      });
    });

  clientOptions(cron.command('pause').description('stop a cron job from running until it is resumed'))
    .argument('<job-id>', 'the id `molf cron list` shows (cj_…)')
    .option('--json', 'print the job as JSON')
    .action(async (jobId: string, options: ClientConnectionOptions & JsonOption) => {
      await withClient(options, async (client) => {
        const job = await client.rpc.cron.update.mutate({ jobId, enabled: false });
        if (options.json === true) printJson(job);
        else process.stdout.write(`paused ${title(job)}: \`molf cron resume ${job.jobId}\` runs it again\n`);
      });
    });

  clientOptions(cron.command('resume').description('let a paused cron job run again, from its next slot after now'))
    .argument('<job-id>', 'the id `molf cron list` shows (cj_…)')
    .option('--json', 'print the job as JSON')
    .action(async (jobId: string, options: ClientConnectionOptions & JsonOption) => {
      await withClient(options, async (client) => {
        const job = await client.rpc.cron.update.mutate({ jobId, enabled: true });
        if (options.json === true) printJson(job);
        else process.stdout.write(`resumed ${title(job)}: ${nextRunText(job)}\n`);
      });
    });

  clientOptions(
    cron
      .command('run')
      .description('run a cron job once now, outside its schedule, and say how it went (exit 1 when it failed)'),
  )
    .argument('<job-id>', 'the id `molf cron list` shows (cj_…)')
    .option('--json', 'print the job as JSON (its lastRun says how the run went)')
    .action(async (jobId: string, options: ClientConnectionOptions & JsonOption) => {
      await withClient(options, async (client) => {
        const job = await client.rpc.cron.run.mutate({ jobId });
        const last = job.lastRun;
        if (options.json === true) printJson(job);
        if (last === undefined || last.outcome === 'failed') {
          throw new MolfError(
            'internal',
            `${title(job)} could not run: ${last?.reason ?? 'the server kept no record of the run'}`,
          );
        }
        if (options.json === true) return;
        const where = `session ${last.sessionId ?? '(unknown)'}`;
        process.stdout.write(
          last.outcome === 'started'
            ? `${title(job)}: started in ${where}\n`
            : `${title(job)}: queued in ${where}, behind the turn in progress\n`,
        );
      });
    });
}

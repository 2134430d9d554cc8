import { CRON_TOOL } from '@molf/permissions';
import {
  type CronAddInput,
  type CronJob,
  CronOnAskSchema,
  describeCronSchedule,
  isMolfError,
  MAX_PROMPT_CHARS,
  oneLineName,
  type ToolResult,
  toErrorResult,
} from '@molf/protocol';
import { z } from 'zod';
import type { CronScheduler } from '../cron/cron-scheduler.ts';
import type { ServerTool, ServerToolContext } from './server-tool.ts';

const cronArgs = z.strictObject({
  action: z.enum(['add', 'list', 'update', 'remove', 'run_now']),
  job_id: z.string().max(64).optional().describe('The job to update, remove or run now'),
  name: oneLineName('a job name', 128).optional().describe('A short name for the job'),
  prompt: z.string().min(1).max(MAX_PROMPT_CHARS).optional().describe('What to do at each run, as a user would ask it'),
  at: z.string().max(64).optional().describe('Run once: an ISO 8601 time with offset, or a duration from now (20m)'),
  every: z.string().max(32).optional().describe('Run every 30s|5m|2h|1d (at least 1 minute)'),
  cron: z.string().max(256).optional().describe('A 5-field cron expression, e.g. "0 9 * * 1-5"'),
  tz: z.string().max(64).optional().describe('The IANA time zone of the cron expression, e.g. Europe/Berlin'),
  until: z.string().max(64).optional().describe('No run after this: an ISO 8601 time, or a duration from now'),
  max_runs: z.number().int().positive().optional().describe('No run after this many'),
  session: z
    .string()
    .max(64)
    .optional()
    .describe('Where runs go: "current" (this session, the default), "new" (a new session per run), or a session id'),
  on_ask: CronOnAskSchema.optional().describe(
    'A tool call that needs approval in a run nobody watches: "deny" (default) or "wait" for a person',
  ),
  enabled: z.boolean().optional(),
});

type CronArgs = z.infer<typeof cronArgs>;

const DESCRIPTION =
  'Schedules prompts to run later in this project, as if the user sent them: once (at), repeatedly (every), ' +
  'or on a cron expression with a time zone. Use it only when the user asks for something scheduled or ' +
  'recurring ("every weekday at 9", "in 20 minutes", "every 30 min until Friday"). Each run is a normal turn: ' +
  'its tool calls need approval as usual, and a call that asks while nobody watches is denied unless on_ask is ' +
  '"wait". Adding, changing, removing or running a job asks the user first. Actions: add (prompt and one of ' +
  'at/every/cron), list, update (job_id and what changes), remove (job_id), run_now (job_id).';

function describeJob(job: CronJob): string {
  const target = job.target.type === 'new' ? 'a new session per run' : `session ${job.target.sessionId}`;
  const parts = [
    `${job.jobId} "${job.name}": ${describeCronSchedule(job.schedule)}`,
    job.enabled ? undefined : 'paused',
    job.nextRunAt === undefined ? 'no next run' : `next ${job.nextRunAt}`,
    job.lastRun === undefined
      ? undefined
      : `last ${job.lastRun.at} ${job.lastRun.outcome}${job.lastRun.reason === undefined ? '' : ` (${job.lastRun.reason})`}`,
    `runs ${job.runs}${job.maxRuns === undefined ? '' : `/${job.maxRuns}`}`,
    job.until === undefined ? undefined : `until ${job.until}`,
    `into ${target}`,
    `on ask: ${job.onAsk}`,
  ];
  return `${parts.filter((part) => part !== undefined).join(' · ')}\n  prompt: ${job.prompt.length > 200 ? `${job.prompt.slice(0, 200)}…` : job.prompt}`;
}

function scheduleOf(args: CronArgs): CronAddInput['schedule'] | undefined {
  const schedule = {
    ...(args.at === undefined ? {} : { at: args.at }),
    ...(args.every === undefined ? {} : { every: args.every }),
    ...(args.cron === undefined ? {} : { cron: args.cron }),
    ...(args.tz === undefined ? {} : { tz: args.tz }),
  };
  return Object.keys(schedule).length === 0 ? undefined : schedule;
}

/** What a call sets of a job, in the RPC's terms: each field it gives (`add` and `update` alike). */
type JobFields = Partial<
  Pick<CronAddInput, 'schedule' | 'name' | 'prompt' | 'session' | 'until' | 'maxRuns' | 'onAsk' | 'enabled'>
>;

function fieldsOf(args: CronArgs, context: ServerToolContext): JobFields {
  const schedule = scheduleOf(args);
  const session = args.session === 'current' ? context.sessionId : args.session;
  return {
    ...(schedule === undefined ? {} : { schedule }),
    ...(args.name === undefined ? {} : { name: args.name }),
    ...(args.prompt === undefined ? {} : { prompt: args.prompt }),
    ...(session === undefined ? {} : { session }),
    ...(args.until === undefined ? {} : { until: args.until }),
    ...(args.max_runs === undefined ? {} : { maxRuns: args.max_runs }),
    ...(args.on_ask === undefined ? {} : { onAsk: args.on_ask }),
    ...(args.enabled === undefined ? {} : { enabled: args.enabled }),
  };
}

/**
 * `cron({ action, … })`: the model's way to schedule prompts on its session's worker. Every call
 * passes the approval gate first (its subject: the action, the schedule and the prompt); a job's
 * runs go into this session unless it says otherwise. Jobs of other workers are not visible.
 */
export function createCronTool(options: { scheduler: () => CronScheduler | undefined }): ServerTool<typeof cronArgs> {
  return {
    definition: { name: CRON_TOOL, description: DESCRIPTION, args: cronArgs, defaultTimeoutMs: 60_000 },
    async run(args, context): Promise<ToolResult> {
      const scheduler = options.scheduler();
      if (scheduler === undefined) return toErrorResult('internal', 'The scheduler is not running.');
      const jobOfWorker = (): CronJob | ToolResult => {
        const job = args.job_id === undefined ? undefined : scheduler.get(args.job_id);
        if (args.job_id === undefined) return toErrorResult('invalid_arguments', `${args.action} needs job_id.`);
        if (job === undefined || job.workerId !== context.workerId) {
          return toErrorResult(
            'invalid_arguments',
            `There is no cron job ${args.job_id} on this worker (list shows them).`,
          );
        }
        return job;
      };
      try {
        switch (args.action) {
          case 'list': {
            const jobs = scheduler.list({ workerId: context.workerId });
            return { output: jobs.length === 0 ? 'No cron jobs on this worker.' : jobs.map(describeJob).join('\n') };
          }
          case 'add': {
            const { schedule, prompt, ...fields } = fieldsOf(args, context);
            if (prompt === undefined || schedule === undefined) {
              return toErrorResult('invalid_arguments', 'add needs prompt and one of at, every or cron.');
            }
            const job = await scheduler.add(
              { ...fields, workerId: context.workerId, schedule, prompt },
              {
                createdBy: {
                  sessionId: context.sessionId,
                  toolCallId: context.sessionToolCallId ?? context.toolCallId,
                },
                defaultTarget: { type: 'session', sessionId: context.sessionId },
              },
            );
            return { output: `Scheduled ${describeJob(job)}` };
          }
          case 'update': {
            const job = jobOfWorker();
            if ('output' in job) return job;
            const updated = await scheduler.update({ ...fieldsOf(args, context), jobId: job.jobId });
            return { output: `Updated ${describeJob(updated)}` };
          }
          case 'remove': {
            const job = jobOfWorker();
            if ('output' in job) return job;
            await scheduler.remove(job.jobId);
            return { output: `Removed ${job.jobId} "${job.name}".` };
          }
          case 'run_now': {
            const job = jobOfWorker();
            if ('output' in job) return job;
            const ran = await scheduler.runNow(job.jobId);
            const last = ran.lastRun;
            return last?.outcome === 'failed'
              ? toErrorResult('internal', `${job.jobId} could not run: ${last.reason ?? 'unknown reason'}`)
              : {
                  output: `Ran ${job.jobId} "${job.name}": ${last?.outcome ?? 'started'} in session ${last?.sessionId}.`,
                };
          }
        }
      } catch (error) {
        // A refused schedule, session or interval, a job gone meanwhile: the model reads why.
        if (isMolfError(error)) return toErrorResult('invalid_arguments', error.message);
        throw error;
      }
    },
  };
}

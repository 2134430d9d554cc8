import { randomUUID } from 'node:crypto';
import { createSilentLogger } from '@molf/logging';
import type { ToolCallId, WorkerId } from '@molf/protocol';
import { describe, expect, it } from 'vitest';
import { openCronJobStore, startCronScheduler } from '../cron/index.ts';
import { openFileStateDocuments } from '../state/index.ts';
import { createManualClock } from '../testing/manual-clock.ts';
import { createTempDir } from '../testing/test-link.ts';
import { createCronTool } from './cron-tool.ts';
import type { ServerToolContext } from './server-tool.ts';

const WORKER = randomUUID() as WorkerId;
const OTHER_WORKER = randomUUID() as WorkerId;

async function startTool() {
  const dir = await createTempDir();
  const store = await openCronJobStore({ documents: openFileStateDocuments({ dataDir: dir.path }) });
  const fired: string[] = [];
  const scheduler = await startCronScheduler({
    store,
    logger: createSilentLogger(),
    clock: createManualClock(new Date('2026-11-24T10:00:00.000Z')).clock,
    defaultTimezone: 'UTC',
    fire: async (job) => {
      fired.push(job.prompt);
      return { outcome: 'started', sessionId: 'ses_run', messageId: 'msg_run' };
    },
  });
  const tool = createCronTool({ scheduler: () => scheduler });
  const context: ServerToolContext = {
    sessionId: 'ses_here',
    workerId: WORKER,
    toolCallId: 'tc_1' as ToolCallId,
    sessionToolCallId: 'call_1',
    signal: new AbortController().signal,
    logger: createSilentLogger(),
  };
  const call = (args: Record<string, unknown>) => tool.run(tool.definition.args.parse(args), context);
  return {
    scheduler,
    fired,
    call,
    async [Symbol.asyncDispose]() {
      await scheduler.close();
      await store.close();
      await dir[Symbol.asyncDispose]();
    },
  };
}

describe('the cron tool', () => {
  it('adds a job into the calling session, lists, updates, runs and removes it', async () => {
    await using t = await startTool();
    const added = await t.call({ action: 'add', every: '30m', prompt: 'Watch the log', name: 'log', max_runs: 5 });
    expect(added.output).toMatch(/^Scheduled cj_\w+ "log": every 30m · next 2026-11-24T10:30:00.000Z/);
    const [job] = t.scheduler.list();
    expect(job).toMatchObject({
      target: { type: 'session', sessionId: 'ses_here' },
      maxRuns: 5,
      createdBy: { sessionId: 'ses_here', toolCallId: 'call_1' },
    });
    const jobId = job?.jobId ?? '';

    expect((await t.call({ action: 'list' })).output).toContain(`${jobId} "log": every 30m`);
    const updated = await t.call({ action: 'update', job_id: jobId, every: '2h', on_ask: 'wait', session: 'new' });
    expect(updated.output).toMatch(/^Updated .*every 2h/);
    expect(t.scheduler.get(jobId)).toMatchObject({
      schedule: { kind: 'every', everyMs: 7_200_000 },
      onAsk: 'wait',
      target: { type: 'new' },
      name: 'log',
      prompt: 'Watch the log',
    });
    expect((await t.call({ action: 'run_now', job_id: jobId })).output).toBe(
      `Ran ${jobId} "log": started in session ses_run.`,
    );
    expect(t.fired).toEqual(['Watch the log']);
    expect((await t.call({ action: 'remove', job_id: jobId })).output).toBe(`Removed ${jobId} "log".`);
    expect(t.scheduler.list()).toEqual([]);
  });

  it('sees no job of another worker, and tells the model what a call lacks or what was refused', async () => {
    await using t = await startTool();
    const foreign = await t.scheduler.add(
      { workerId: OTHER_WORKER, schedule: { every: '1h' }, prompt: 'elsewhere' },
      { createdBy: {}, defaultTarget: { type: 'new' } },
    );
    expect((await t.call({ action: 'list' })).output).toBe('No cron jobs on this worker.');
    for (const action of ['update', 'remove', 'run_now']) {
      const result = await t.call({ action, job_id: foreign.jobId, prompt: 'hijacked' });
      expect(result, action).toMatchObject({ meta: { errorKind: 'invalid_arguments' } });
      expect(result.error).toContain(`There is no cron job ${foreign.jobId} on this worker`);
    }
    expect(t.scheduler.get(foreign.jobId)?.prompt).toBe('elsewhere');
    expect((await t.call({ action: 'add', prompt: 'no schedule' })).error).toBe(
      'add needs prompt and one of at, every or cron.',
    );
    expect((await t.call({ action: 'remove' })).error).toBe('remove needs job_id.');
    const refused = await t.call({ action: 'add', every: '30s', prompt: 'too often' });
    expect(refused).toMatchObject({ meta: { errorKind: 'invalid_arguments' } });
    expect(refused.error).toContain('schedule.every');
    expect(t.scheduler.list({ workerId: WORKER })).toEqual([]);
  });
});

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CronJob } from '@molf/protocol';
import { startFakeLlm } from '@molf/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { spawnMolf, startLocalServer, stopSpawnedProcesses, waitUntil } from '../testing/cli-test-kit.ts';

const cleanups: Array<() => Promise<unknown>> = [];

afterEach(async () => {
  // The processes first: the cleanups remove directories they use.
  await stopSpawnedProcesses();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function tempDir(): Promise<string> {
  const path = await mkdtemp(join(tmpdir(), 'molf-cli-cron-'));
  cleanups.push(() => rm(path, { recursive: true, force: true }));
  return path;
}

/** A server (the fake LLM as its model) and a worker on a temp workdir; `molf` runs in that workdir. */
async function startStack() {
  const llm = await startFakeLlm({ turns: [{ text: 'Checked.' }] });
  cleanups.push(() => llm.close());
  const dataDir = await tempDir();
  const workdir = await tempDir();
  const { server, worker, tokens } = await startLocalServer(cleanups, {
    dataDir,
    workdir,
    llmBaseURL: llm.baseURL,
    tokenSuffix: 'cli-cron-test-token-0001',
  });
  const molf = (args: string[]) =>
    spawnMolf(['cron', ...args], {
      cwd: workdir,
      env: {
        MOLF_SERVER_URL: server.url,
        MOLF_CLIENT_TOKEN: tokens.client,
        MOLF_LOG_LEVEL: 'warn',
        MOLF_LOG_FILE: 'none',
        MOLF_CLIENT_DIR: dataDir,
      },
    });
  const listed = async (): Promise<CronJob[]> => {
    const result = await molf(['list', '--json']);
    expect(result.exitCode, result.stderr).toBe(0);
    return JSON.parse(result.stdout) as CronJob[];
  };
  return { server, worker, llm, molf, listed };
}

const MINUTE = 60_000;

describe('molf cron', () => {
  it('adds a job --every 5m and lists it as JSON with its next run, and as a table with every kind of schedule', async () => {
    const { molf, listed } = await startStack();
    const before = Date.now();
    const added = await molf(['add', '--every', '5m', 'Watch the log and tell me about errors']);
    expect(added.stderr).toBe('');
    expect(added.stdout).toMatch(
      /^added cj_[0-9a-f]+ "every 5m: Watch the log and tell me about errors": every 5m, next run \d{4}-\d\d-\d\d \d\d:\d\d(:\d\d)? UTC; runs go into a new session each$/,
    );
    const weekday = await molf([
      'add',
      '--cron',
      '0 9 * * 1-5',
      '--tz',
      'Europe/Berlin',
      '--name',
      'weekday tests',
      '--max-runs',
      '3',
      '--on-ask',
      'wait',
      '--json',
      'Run the test suite and summarise failures',
    ]);
    expect(JSON.parse(weekday.stdout)).toMatchObject({
      name: 'weekday tests',
      schedule: { kind: 'cron', expression: '0 9 * * 1-5', timezone: 'Europe/Berlin' },
      maxRuns: 3,
      onAsk: 'wait',
      enabled: true,
    });
    const once = await molf(['add', '--at', '20m', '--paused', '--name', 'deploy check', 'Is the deploy done?']);
    expect(once.stdout).toMatch(
      /^added cj_[0-9a-f]+ "deploy check": at \d{4}-\S+ \S+ UTC, paused \(`molf cron resume cj_[0-9a-f]+` starts it\)/,
    );

    const [every] = await listed();
    expect(every).toMatchObject({
      schedule: { kind: 'every', everyMs: 5 * MINUTE },
      prompt: 'Watch the log and tell me about errors',
      target: { type: 'new' },
      onAsk: 'deny',
      missed: 'run_once',
      enabled: true,
      runs: 0,
    });
    const next = Date.parse(every?.nextRunAt ?? '');
    expect(next).toBeGreaterThan(before);
    expect(next).toBeLessThanOrEqual(Date.now() + 5 * MINUTE);

    const table = await molf(['list']);
    const lines = table.stdout.split('\n');
    expect(lines[0]).toMatch(/^ID +NAME +SCHEDULE +NEXT RUN +LAST RUN +RUNS +TARGET +ON ASK +PAUSED$/);
    expect(lines[1]).toMatch(/^cj_\S+ +every 5m: Watch the log.* +every 5m +\d{4}-\S+ \S+ UTC +— +0 +new +deny +no$/);
    expect(lines[2]).toMatch(
      /^cj_\S+ +weekday tests +cron "0 9 \* \* 1-5" \(Europe\/Berlin\) +\d{4}-\d\d-\d\d \d\d:00 UTC +— +0\/3 +new +wait 10m +no$/,
    );
    expect(lines[3]).toMatch(/^cj_\S+ +deploy check +at \d{4}-\S+ \S+ UTC +— +— +0 +new +deny +yes$/);
  });

  it('refuses a zero interval, an unknown unit, two schedules and an unknown id with exit 1 and a message naming the problem', async () => {
    const { molf, server } = await startStack();
    const zero = await molf(['add', '--every', '0m', 'ping']);
    expect(zero.exitCode).toBe(1);
    expect(zero.stderr).toContain('molf: --every: a duration is more than zero, not "0m"');

    const badUnit = await molf(['add', '--every', '5x', 'ping']);
    expect(badUnit.exitCode).toBe(1);
    expect(badUnit.stderr).toContain('molf: --every: "5x" has an unknown unit "x"');

    const two = await molf(['add', '--every', '5m', '--at', '20m', 'ping']);
    expect(two.exitCode).toBe(1);
    expect(two.stderr).toContain('molf: give one schedule, not --every and --at');

    const unknown = await molf(['rm', 'cj_0123456789abcdef']);
    expect(unknown.exitCode).toBe(1);
    expect(unknown.stderr).toContain('molf: no cron job cj_0123456789abcdef');
    expect(server.cron.list()).toEqual([]);
  });

  it('pauses a job (listed paused, with no next run), resumes it (a next run again) and removes it', async () => {
    const { molf, listed, server, worker } = await startStack();
    const job = await server.cron.add(
      { workerId: worker.workerId, schedule: { every: '30m' }, prompt: 'Watch the log', name: 'watch' },
      { createdBy: {}, defaultTarget: { type: 'new' } },
    );

    const paused = await molf(['pause', job.jobId]);
    expect(paused.stdout).toBe(`paused ${job.jobId} "watch": \`molf cron resume ${job.jobId}\` runs it again`);
    const [whilePaused] = await listed();
    expect(whilePaused).toMatchObject({ jobId: job.jobId, enabled: false });
    expect(whilePaused?.nextRunAt).toBeUndefined();

    const resumed = await molf(['resume', job.jobId]);
    expect(resumed.stdout).toMatch(new RegExp(`^resumed ${job.jobId} "watch": next run \\d{4}-\\S+ \\S+ UTC$`));
    const [again] = await listed();
    expect(again).toMatchObject({ jobId: job.jobId, enabled: true });
    expect(Date.parse(again?.nextRunAt ?? '')).toBeGreaterThan(Date.now());

    const removed = await molf(['rm', job.jobId, '--json']);
    expect(JSON.parse(removed.stdout)).toEqual({ jobId: job.jobId, removed: true });
    expect(await listed()).toEqual([]);
  });

  it('turns the heartbeat on (every 30m by default, or --every) and off, and refuses a bad interval naming --every', async () => {
    const { molf, listed } = await startStack();
    const on = await molf(['heartbeat', 'on']);
    expect(on.stdout).toMatch(/^heartbeat on for worker .+: every 30m, next run .+ UTC; it reads HEARTBEAT\.md/);
    expect(await listed()).toEqual([
      expect.objectContaining({ heartbeat: true, schedule: expect.objectContaining({ everyMs: 1_800_000 }) }),
    ]);
    await molf(['heartbeat', 'on', '--every', '2h']);
    expect((await listed())[0]?.schedule).toMatchObject({ everyMs: 7_200_000 });
    const bad = await molf(['heartbeat', 'on', '--every', '5x']);
    expect(bad.exitCode).toBe(1);
    expect(bad.stderr).toContain('--every');
    expect(JSON.parse((await molf(['heartbeat', 'off', '--json'])).stdout)).toBeNull();
    expect(await listed()).toEqual([]);
  });

  it('runs a job added with --every 1m on its schedule: its turn is in a session with the job id, and list shows last and next run', async () => {
    const { molf, listed, server, llm } = await startStack();
    // Anchored 58 s ago: the first slot of `every 1m` comes in about 2 s, on the server's real clock.
    const anchor = new Date(Date.now() - 58_000).toISOString();
    const added = await molf(['add', '--every', '1m', '--anchor', anchor, '--name', 'tick', '--json', 'Say tick']);
    expect(added.exitCode, added.stderr).toBe(0);
    const job = JSON.parse(added.stdout) as CronJob;
    await waitUntil(() => llm.requests.length === 1, { what: 'the scheduled run to reach the model' });
    await waitUntil(async () => (await listed())[0]?.lastRun !== undefined, { what: 'the run recorded' });
    const [after] = await listed();
    expect(after).toMatchObject({ jobId: job.jobId, runs: 1, lastRun: { outcome: 'started' } });
    expect(Date.parse(after?.nextRunAt ?? '') - Date.parse(after?.lastRun?.scheduledFor ?? '')).toBe(MINUTE);
    const sessionId = after?.lastRun?.sessionId ?? '';
    await waitUntil(async () => (await server.sessions.messages(sessionId)).length === 2, {
      what: 'the answer stored',
    });
    expect((await server.sessions.messages(sessionId))[0]).toMatchObject({
      role: 'user',
      text: 'Say tick',
      cronJobId: job.jobId,
    });
  });

  it('runs a job now into a new session, and fails with the reason and exit 1 when its worker is offline', async () => {
    const { molf, server, worker, llm } = await startStack();
    const job = await server.cron.add(
      { workerId: worker.workerId, schedule: { every: '1h' }, prompt: 'Check the deploy', name: 'deploy' },
      { createdBy: {}, defaultTarget: { type: 'new' } },
    );

    const ran = await molf(['run', job.jobId]);
    expect(ran.stderr).toBe('');
    const sessionId = /^\S+ "deploy": started in session (\S+)$/.exec(ran.stdout)?.[1];
    expect(sessionId).toBeDefined();
    expect((await server.sessions.get(sessionId ?? ''))?.workerId).toBe(worker.workerId);
    await waitUntil(() => llm.requests.length === 1, { what: 'the run to reach the model' });

    await worker.close();
    await waitUntil(() => server.registry.get(worker.workerId)?.state === 'offline', { what: 'the worker offline' });
    const failed = await molf(['run', job.jobId]);
    expect(failed.exitCode).toBe(1);
    expect(failed.stderr).toContain(`molf: ${job.jobId} "deploy" could not run: worker ${worker.workerId} is offline`);
  });
});

import { randomBytes, randomUUID } from 'node:crypto';
import { mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { createLogger } from '@molf/logging';
import { type CronJob, MAX_CRON_JOBS_PER_WORKER, type WorkerId } from '@molf/protocol';
import { describe, expect, it } from 'vitest';
import { createTempDir } from '../testing/test-link.ts';
import { openCronJobStore } from './cron-job-store.ts';

const WORKER_A = randomUUID() as WorkerId;
const WORKER_B = randomUUID() as WorkerId;

function makeJob(overrides: Partial<CronJob> = {}): CronJob {
  return {
    jobId: `cj_${randomBytes(8).toString('hex')}`,
    name: 'check the build',
    workerId: WORKER_A,
    schedule: { kind: 'every', everyMs: 3_600_000, anchor: '2030-01-01T00:00:00.000Z' },
    prompt: 'Run the tests and tell me what broke.',
    target: { type: 'new' },
    onAsk: 'deny',
    missed: 'run_once',
    enabled: true,
    createdBy: { client: 'cli' },
    createdAt: '2030-01-01T00:00:00.000Z',
    updatedAt: '2030-01-01T00:00:00.000Z',
    nextRunAt: '2030-01-01T01:00:00.000Z',
    runs: 0,
    consecutiveFailures: 0,
    ...overrides,
  };
}

const jobsPath = (dataDir: string) => join(dataDir, 'cron', 'jobs.json');

/** A logger that keeps every JSON line it writes. */
async function createRecordingLogger() {
  const lines: Array<{ level: number; msg: string; index?: number; copy?: string }> = [];
  const destination = new Writable({
    write(chunk, _encoding, callback) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      callback();
    },
  });
  return { logger: await createLogger({ name: 'server', level: 'debug', destination }), lines };
}

describe('cron job store', () => {
  it('keeps jobs across a reopen, in creation order, with changes and removals', async () => {
    await using dir = await createTempDir();
    const first = makeJob({ name: 'first' });
    const second = makeJob({ name: 'second', workerId: WORKER_B });
    const third = makeJob({ name: 'third' });
    {
      await using store = await openCronJobStore({ dataDir: dir.path });
      expect(store.list()).toEqual([]);
      await store.add(first);
      await store.add(second);
      await store.add(third);
      await store.put({ ...first, runs: 3, enabled: false });
      expect(await store.remove(second.jobId)).toBe(true);
      expect(await store.remove(second.jobId)).toBe(false);
    }

    await using reopened = await openCronJobStore({ dataDir: dir.path });
    expect(reopened.list()).toEqual([{ ...first, runs: 3, enabled: false }, third]);
    expect(reopened.get(third.jobId)).toEqual(third);
    expect(reopened.get(second.jobId)).toBeUndefined();
    expect(reopened.damaged).toEqual([]);
    expect(JSON.parse(await readFile(jobsPath(dir.path), 'utf8'))).toEqual({
      version: 1,
      jobs: [{ ...first, runs: 3, enabled: false }, third],
    });
  });

  it('lists the jobs of one worker when asked', async () => {
    await using dir = await createTempDir();
    await using store = await openCronJobStore({ dataDir: dir.path });
    const onA = makeJob();
    const onB = makeJob({ workerId: WORKER_B });
    await store.add(onA);
    await store.add(onB);
    expect(store.list({ workerId: WORKER_B })).toEqual([onB]);
    expect(store.list({ workerId: WORKER_A })).toEqual([onA]);
  });

  it('hands out copies, so changing a job read from it changes nothing stored', async () => {
    await using dir = await createTempDir();
    await using store = await openCronJobStore({ dataDir: dir.path });
    const job = makeJob();
    await store.add(job);
    const read = store.get(job.jobId) as CronJob;
    read.runs = 99;
    const listed = store.list()[0] as CronJob;
    listed.schedule = { kind: 'at', at: '2031-01-01T00:00:00.000Z' };
    expect(store.get(job.jobId)).toEqual(job);
  });

  it('writes the file with mode 0600 in a directory with mode 0700', async () => {
    await using dir = await createTempDir();
    await using store = await openCronJobStore({ dataDir: dir.path });
    await store.add(makeJob());
    expect((await stat(jobsPath(dir.path))).mode & 0o777).toBe(0o600);
    expect((await stat(join(dir.path, 'cron'))).mode & 0o777).toBe(0o700);
  });

  it("refuses a worker's job beyond the cap, naming the cap and the worker, and still accepts another worker's", async () => {
    await using dir = await createTempDir();
    await using store = await openCronJobStore({ dataDir: dir.path });
    await Promise.all(Array.from({ length: MAX_CRON_JOBS_PER_WORKER }, () => store.add(makeJob())));

    const refused = store.add(makeJob());
    await expect(refused).rejects.toMatchObject({ code: 'busy', field: 'workerId' });
    await expect(refused).rejects.toThrow(new RegExp(`${WORKER_A}.*${MAX_CRON_JOBS_PER_WORKER}`));
    await store.add(makeJob({ workerId: WORKER_B }));
    expect(store.list({ workerId: WORKER_A })).toHaveLength(MAX_CRON_JOBS_PER_WORKER);
    expect(store.list({ workerId: WORKER_B })).toHaveLength(1);
  });

  it('refuses to move a job by put to a worker that is at the cap', async () => {
    await using dir = await createTempDir();
    await using store = await openCronJobStore({ dataDir: dir.path });
    await Promise.all(Array.from({ length: MAX_CRON_JOBS_PER_WORKER }, () => store.add(makeJob())));
    const onB = makeJob({ workerId: WORKER_B });
    await store.add(onB);
    await expect(store.put({ ...onB, workerId: WORKER_A })).rejects.toMatchObject({ code: 'busy' });
    // A job of a worker at the cap can still be changed.
    const onA = store.list({ workerId: WORKER_A })[0] as CronJob;
    await store.put({ ...onA, runs: 1 });
    expect(store.get(onA.jobId)?.runs).toBe(1);
  });

  it('refuses a second job with an id already stored', async () => {
    await using dir = await createTempDir();
    await using store = await openCronJobStore({ dataDir: dir.path });
    const job = makeJob();
    await store.add(job);
    await expect(store.add({ ...job, name: 'other' })).rejects.toMatchObject({ code: 'conflict', field: 'jobId' });
    expect(store.list()).toEqual([job]);
  });

  it('refuses to put a job whose id it does not know', async () => {
    await using dir = await createTempDir();
    await using store = await openCronJobStore({ dataDir: dir.path });
    await expect(store.put(makeJob())).rejects.toMatchObject({ code: 'job_not_found', field: 'jobId' });
    expect(store.list()).toEqual([]);
  });

  it('refuses an invalid job, naming the field, and changes neither memory nor the file', async () => {
    await using dir = await createTempDir();
    await using store = await openCronJobStore({ dataDir: dir.path });
    const job = makeJob();
    await store.add(job);
    const before = await readFile(jobsPath(dir.path));

    const badSchedule = { ...job, schedule: { kind: 'every' as const, everyMs: -5, anchor: 'tomorrow' } };
    await expect(store.put(badSchedule)).rejects.toMatchObject({ code: 'invalid_input', field: 'schedule.everyMs' });
    await expect(store.add(makeJob({ name: '' }))).rejects.toThrow(/is invalid and was not stored: name:/);
    await expect(store.add({ ...makeJob(), jobId: 'job-1' })).rejects.toMatchObject({
      code: 'invalid_input',
      field: 'jobId',
    });

    expect(store.list()).toEqual([job]);
    expect(await readFile(jobsPath(dir.path))).toEqual(before);
  });

  it('keeps memory as it was when the file cannot be written', async () => {
    await using dir = await createTempDir();
    await using store = await openCronJobStore({ dataDir: dir.path });
    const kept = makeJob();
    await store.add(kept);
    // A non-empty directory where the file goes: the atomic rename fails, even for root.
    await rm(jobsPath(dir.path));
    await mkdir(join(jobsPath(dir.path), 'blocker'), { recursive: true });

    const lost = makeJob();
    await expect(store.add(lost)).rejects.toThrow();
    await expect(store.put({ ...kept, runs: 5 })).rejects.toThrow();
    expect(await store.remove(kept.jobId).catch(() => 'refused')).toBe('refused');
    expect(store.list()).toEqual([kept]);

    // Once the disk takes writes again, the store goes on from what it held.
    await rm(jobsPath(dir.path), { recursive: true });
    await store.add(lost);
    expect(JSON.parse(await readFile(jobsPath(dir.path), 'utf8')).jobs).toEqual([kept, lost]);
  });

  it('lands every one of 50 concurrent adds and then 50 concurrent puts', async () => {
    await using dir = await createTempDir();
    const jobs = Array.from({ length: 50 }, (_, index) => makeJob({ name: `job ${index}` }));
    {
      await using store = await openCronJobStore({ dataDir: dir.path });
      await Promise.all(jobs.map((job) => store.add(job)));
      await Promise.all(jobs.map((job, index) => store.put({ ...job, runs: index + 1 })));
    }
    await using reopened = await openCronJobStore({ dataDir: dir.path });
    expect(reopened.list()).toEqual(jobs.map((job, index) => ({ ...job, runs: index + 1 })));
  });

  it('waits for pending writes on close and refuses writes after it', async () => {
    await using dir = await createTempDir();
    const store = await openCronJobStore({ dataDir: dir.path });
    const job = makeJob();
    const adding = store.add(job);
    await store.close();
    await adding;
    expect(JSON.parse(await readFile(jobsPath(dir.path), 'utf8')).jobs).toEqual([job]);
    await expect(store.add(makeJob())).rejects.toThrow(/closed/);
  });

  it('starts empty when there is no file, and creates none until a change', async () => {
    await using dir = await createTempDir();
    await using store = await openCronJobStore({ dataDir: dir.path });
    expect(store.list()).toEqual([]);
    await expect(stat(jobsPath(dir.path))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  describe('refuses to open a file it cannot read as jobs, naming it and leaving it untouched', () => {
    it.each([
      ['not JSON', '{"version": 1, "jobs": [', /is not valid JSON/],
      ['a list instead of an object', '[]', /is not \{ "version": 1, "jobs": \[\.\.\.\] \}/],
      ['jobs that are not a list', '{"version": 1, "jobs": {}}', /jobs: /],
      ['no version', '{"jobs": []}', /version: /],
      ['a newer version', '{"version": 2, "jobs": []}', /has version 2.*a newer Molf server wrote it/],
    ])('%s', async (_case, text, reason) => {
      await using dir = await createTempDir();
      await mkdir(join(dir.path, 'cron'));
      await writeFile(jobsPath(dir.path), text);

      const opening = openCronJobStore({ dataDir: dir.path });
      await expect(opening).rejects.toMatchObject({ code: 'config_invalid' });
      await expect(opening).rejects.toThrow(jobsPath(dir.path));
      await expect(opening).rejects.toThrow(reason);
      await expect(opening).rejects.toThrow(/move it away|move the file away/);
      expect(await readFile(jobsPath(dir.path), 'utf8')).toBe(text);
      expect(await readdir(join(dir.path, 'cron'))).toEqual(['jobs.json']);
    });
  });

  it('uses the valid jobs of a partly damaged file, reports the others, and copies the file aside before rewriting it', async () => {
    await using dir = await createTempDir();
    const good = makeJob({ name: 'good' });
    const alsoGood = makeJob({ name: 'also good' });
    const text = `${JSON.stringify({
      version: 1,
      jobs: [
        good,
        { ...makeJob(), schedule: { kind: 'sometimes' } },
        alsoGood,
        { ...good, name: 'twin' },
        // A time the scheduler could not read (it would fire the job again and again).
        { ...makeJob(), retrySlot: 'garbage' },
      ],
    })}\n`;
    await mkdir(join(dir.path, 'cron'));
    await writeFile(jobsPath(dir.path), text);
    const { logger, lines } = await createRecordingLogger();
    const at = new Date('2031-02-03T04:05:06.789Z');

    await using store = await openCronJobStore({ dataDir: dir.path, logger, now: () => at });
    expect(store.list()).toEqual([good, alsoGood]);
    expect(store.damaged).toEqual([
      { index: 1, reason: expect.stringContaining('schedule') },
      { index: 3, reason: expect.stringContaining(`a second job with the id ${good.jobId}`) },
      { index: 4, reason: expect.stringContaining('retrySlot') },
    ]);
    expect(lines.filter((line) => line.level === 40).map((line) => line.index)).toEqual([1, 3, 4]);
    // Opening rewrites nothing.
    expect(await readFile(jobsPath(dir.path), 'utf8')).toBe(text);

    const added = makeJob({ name: 'new' });
    await store.add(added);
    const copy = `${jobsPath(dir.path)}.damaged-2031-02-03T04-05-06.789Z`;
    expect(await readFile(copy, 'utf8')).toBe(text);
    expect((await stat(copy)).mode & 0o777).toBe(0o600);
    expect(lines.some((line) => line.copy === copy)).toBe(true);
    expect(JSON.parse(await readFile(jobsPath(dir.path), 'utf8')).jobs).toEqual([good, alsoGood, added]);

    // Only the file that held the damaged jobs is kept; later changes copy nothing.
    await store.remove(added.jobId);
    expect((await readdir(join(dir.path, 'cron'))).sort()).toEqual([
      'jobs.json',
      'jobs.json.damaged-2031-02-03T04-05-06.789Z',
    ]);
  });

  it('never overwrites an earlier copy of a damaged file', async () => {
    await using dir = await createTempDir();
    const text = `${JSON.stringify({ version: 1, jobs: [{ jobId: 'broken' }] })}\n`;
    await mkdir(join(dir.path, 'cron'));
    await writeFile(jobsPath(dir.path), text);
    const earlier = `${jobsPath(dir.path)}.damaged-2031-02-03T04-05-06.789Z`;
    await writeFile(earlier, 'an earlier copy');

    await using store = await openCronJobStore({ dataDir: dir.path, now: () => new Date('2031-02-03T04:05:06.789Z') });
    await store.add(makeJob());
    expect(await readFile(earlier, 'utf8')).toBe('an earlier copy');
    expect(await readFile(`${earlier}-2`, 'utf8')).toBe(text);
  });
});

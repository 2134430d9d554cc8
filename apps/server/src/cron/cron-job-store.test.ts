import { randomBytes, randomUUID } from 'node:crypto';
import { mkdir, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { createLogger } from '@molf/logging';
import { type CronJob, MAX_CRON_JOBS_PER_WORKER, type WorkerId } from '@molf/protocol';
import { describe, expect, it } from 'vitest';
import type { StateDocuments } from '../state/index.ts';
import { backendTitle, type StateBackend, stateBackends } from '../testing/state-backends.ts';
import { waitFor } from '../testing/test-link.ts';
import { CRON_JOBS_DOCUMENT, openCronJobStore } from './cron-job-store.ts';

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

/** The jobs as the document holds them. */
async function storedJobs(documents: StateDocuments): Promise<unknown> {
  return JSON.parse((await documents.read(CRON_JOBS_DOCUMENT)) ?? 'null');
}

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

for (const backend of stateBackends()) {
  const suite = backend.unavailable === undefined ? describe : describe.skip;
  suite(backendTitle('cron job store', backend), () => {
    it('keeps jobs across a reopen, in creation order, with changes and removals', async () => {
      await using place = await backend.prepare();
      const { documents } = await place.open();
      const first = makeJob({ name: 'first' });
      const second = makeJob({ name: 'second', workerId: WORKER_B });
      const third = makeJob({ name: 'third' });
      {
        await using store = await openCronJobStore({ documents });
        expect(store.list()).toEqual([]);
        await store.add(first);
        await store.add(second);
        await store.add(third);
        await store.put({ ...first, runs: 3, enabled: false });
        expect(await store.remove(second.jobId)).toBe(true);
        expect(await store.remove(second.jobId)).toBe(false);
      }

      await using reopened = await openCronJobStore({ documents: (await place.open()).documents });
      expect(reopened.list()).toEqual([{ ...first, runs: 3, enabled: false }, third]);
      expect(reopened.get(third.jobId)).toEqual(third);
      expect(reopened.get(second.jobId)).toBeUndefined();
      expect(reopened.damaged).toEqual([]);
      expect(await storedJobs(documents)).toEqual({
        version: 1,
        jobs: [{ ...first, runs: 3, enabled: false }, third],
      });
    });

    it('lists the jobs of one worker when asked', async () => {
      await using place = await backend.prepare();
      await using store = await openCronJobStore({ documents: (await place.open()).documents });
      const onA = makeJob();
      const onB = makeJob({ workerId: WORKER_B });
      await store.add(onA);
      await store.add(onB);
      expect(store.list({ workerId: WORKER_B })).toEqual([onB]);
      expect(store.list({ workerId: WORKER_A })).toEqual([onA]);
    });

    it('hands out copies, so changing a job read from it changes nothing stored', async () => {
      await using place = await backend.prepare();
      await using store = await openCronJobStore({ documents: (await place.open()).documents });
      const job = makeJob();
      await store.add(job);
      const read = store.get(job.jobId) as CronJob;
      read.runs = 99;
      const listed = store.list()[0] as CronJob;
      listed.schedule = { kind: 'at', at: '2031-01-01T00:00:00.000Z' };
      expect(store.get(job.jobId)).toEqual(job);
    });

    it("refuses a worker's job beyond the cap, naming the cap and the worker, and still accepts another worker's", async () => {
      await using place = await backend.prepare();
      await using store = await openCronJobStore({ documents: (await place.open()).documents });
      await Promise.all(Array.from({ length: MAX_CRON_JOBS_PER_WORKER }, () => store.add(makeJob())));

      const refused = store.add(makeJob());
      await expect(refused).rejects.toMatchObject({ code: 'busy', field: 'workerId' });
      await expect(refused).rejects.toThrow(new RegExp(`${WORKER_A}.*${MAX_CRON_JOBS_PER_WORKER}`));
      await store.add(makeJob({ workerId: WORKER_B }));
      expect(store.list({ workerId: WORKER_A })).toHaveLength(MAX_CRON_JOBS_PER_WORKER);
      expect(store.list({ workerId: WORKER_B })).toHaveLength(1);
    });

    it('refuses to move a job by put to a worker that is at the cap', async () => {
      await using place = await backend.prepare();
      await using store = await openCronJobStore({ documents: (await place.open()).documents });
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
      await using place = await backend.prepare();
      await using store = await openCronJobStore({ documents: (await place.open()).documents });
      const job = makeJob();
      await store.add(job);
      await expect(store.add({ ...job, name: 'other' })).rejects.toMatchObject({ code: 'conflict', field: 'jobId' });
      expect(store.list()).toEqual([job]);
    });

    it('refuses to put a job whose id it does not know', async () => {
      await using place = await backend.prepare();
      await using store = await openCronJobStore({ documents: (await place.open()).documents });
      await expect(store.put(makeJob())).rejects.toMatchObject({ code: 'job_not_found', field: 'jobId' });
      expect(store.list()).toEqual([]);
    });

    it('refuses an invalid job, naming the field, and changes neither memory nor the document', async () => {
      await using place = await backend.prepare();
      const { documents } = await place.open();
      await using store = await openCronJobStore({ documents });
      const job = makeJob();
      await store.add(job);
      const before = await documents.read(CRON_JOBS_DOCUMENT);

      const badSchedule = { ...job, schedule: { kind: 'every' as const, everyMs: -5, anchor: 'tomorrow' } };
      await expect(store.put(badSchedule)).rejects.toMatchObject({ code: 'invalid_input', field: 'schedule.everyMs' });
      await expect(store.add(makeJob({ name: '' }))).rejects.toThrow(/is invalid and was not stored: name:/);
      await expect(store.add({ ...makeJob(), jobId: 'job-1' })).rejects.toMatchObject({
        code: 'invalid_input',
        field: 'jobId',
      });

      expect(store.list()).toEqual([job]);
      expect(await documents.read(CRON_JOBS_DOCUMENT)).toBe(before);
    });

    it('lands every one of 50 concurrent adds and then 50 concurrent puts', async () => {
      await using place = await backend.prepare();
      const jobs = Array.from({ length: 50 }, (_, index) => makeJob({ name: `job ${index}` }));
      {
        await using store = await openCronJobStore({ documents: (await place.open()).documents });
        await Promise.all(jobs.map((job) => store.add(job)));
        await Promise.all(jobs.map((job, index) => store.put({ ...job, runs: index + 1 })));
      }
      await using reopened = await openCronJobStore({ documents: (await place.open()).documents });
      expect(reopened.list()).toEqual(jobs.map((job, index) => ({ ...job, runs: index + 1 })));
    });

    it('waits for pending writes on close and refuses writes after it', async () => {
      await using place = await backend.prepare();
      const { documents } = await place.open();
      const store = await openCronJobStore({ documents });
      const job = makeJob();
      const adding = store.add(job);
      await store.close();
      await adding;
      expect(await storedJobs(documents)).toMatchObject({ jobs: [job] });
      await expect(store.add(makeJob())).rejects.toThrow(/closed/);
    });

    it('starts empty when there is no document, and creates none until a change', async () => {
      await using place = await backend.prepare();
      const { documents } = await place.open();
      await using store = await openCronJobStore({ documents });
      expect(store.list()).toEqual([]);
      expect(await documents.read(CRON_JOBS_DOCUMENT)).toBeUndefined();
    });

    describe('refuses to open a document it cannot read as jobs, naming it and leaving it untouched', () => {
      it.each([
        ['not JSON', '{"version": 1, "jobs": [', /is not valid JSON/],
        ['a list instead of an object', '[]', /is not \{ "version": 1, "jobs": \[\.\.\.\] \}/],
        ['jobs that are not a list', '{"version": 1, "jobs": {}}', /jobs: /],
        ['no version', '{"jobs": []}', /version: /],
        ['a newer version', '{"version": 2, "jobs": []}', /has version 2.*a newer Molf server wrote it/],
      ])('%s', async (_case, text, reason) => {
        await using place = await backend.prepare();
        const { documents } = await place.open();
        await documents.write(CRON_JOBS_DOCUMENT, text);

        const opening = openCronJobStore({ documents });
        await expect(opening).rejects.toMatchObject({ code: 'config_invalid' });
        await expect(opening).rejects.toThrow(documents.where(CRON_JOBS_DOCUMENT));
        await expect(opening).rejects.toThrow(reason);
        await expect(opening).rejects.toThrow(/move it away|move the file away/);
        expect(await documents.read(CRON_JOBS_DOCUMENT)).toBe(text);
        expect(await documents.list('cron/')).toEqual([CRON_JOBS_DOCUMENT]);
      });
    });

    it('uses the valid jobs of a partly damaged document, reports the others, and copies it aside before rewriting it', async () => {
      await using place = await backend.prepare();
      const { documents } = await place.open();
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
      await documents.write(CRON_JOBS_DOCUMENT, text);
      const { logger, lines } = await createRecordingLogger();
      const at = new Date('2031-02-03T04:05:06.789Z');

      await using store = await openCronJobStore({ documents, logger, now: () => at });
      expect(store.list()).toEqual([good, alsoGood]);
      expect(store.damaged).toEqual([
        { index: 1, reason: expect.stringContaining('schedule') },
        { index: 3, reason: expect.stringContaining(`a second job with the id ${good.jobId}`) },
        { index: 4, reason: expect.stringContaining('retrySlot') },
      ]);
      expect(lines.filter((line) => line.level === 40).map((line) => line.index)).toEqual([1, 3, 4]);
      // Opening rewrites nothing.
      expect(await documents.read(CRON_JOBS_DOCUMENT)).toBe(text);

      const added = makeJob({ name: 'new' });
      await store.add(added);
      const copy = `${CRON_JOBS_DOCUMENT}.damaged-2031-02-03T04-05-06.789Z`;
      expect(await documents.read(copy)).toBe(text);
      if (place.dataDir !== undefined) {
        expect((await stat(join(place.dataDir, ...copy.split('/')))).mode & 0o777).toBe(0o600);
      }
      expect(lines.some((line) => line.copy === documents.where(copy))).toBe(true);
      expect(await storedJobs(documents)).toMatchObject({ jobs: [good, alsoGood, added] });

      // Only the document that held the damaged jobs is kept; later changes copy nothing.
      await store.remove(added.jobId);
      expect(await documents.list('cron/')).toEqual([CRON_JOBS_DOCUMENT, copy]);
    });

    it('never overwrites an earlier copy of a damaged document', async () => {
      await using place = await backend.prepare();
      const { documents } = await place.open();
      const text = `${JSON.stringify({ version: 1, jobs: [{ jobId: 'broken' }] })}\n`;
      await documents.write(CRON_JOBS_DOCUMENT, text);
      const earlier = `${CRON_JOBS_DOCUMENT}.damaged-2031-02-03T04-05-06.789Z`;
      await documents.write(earlier, 'an earlier copy');

      await using store = await openCronJobStore({ documents, now: () => new Date('2031-02-03T04:05:06.789Z') });
      await store.add(makeJob());
      expect(await documents.read(earlier)).toBe('an earlier copy');
      expect(await documents.read(`${earlier}-2`)).toBe(text);
    });

    it("loses no job when two servers add jobs at the same moment, and each lists the other's", async () => {
      await using place = await backend.prepare();
      await using one = await openCronJobStore({ documents: (await place.open()).documents });
      await using two = await openCronJobStore({ documents: (await place.open()).documents });
      const fromOne = Array.from({ length: 10 }, (_, index) => makeJob({ name: `one ${index}` }));
      const fromTwo = Array.from({ length: 10 }, (_, index) => makeJob({ name: `two ${index}`, workerId: WORKER_B }));
      await Promise.all([...fromOne.map((job) => one.add(job)), ...fromTwo.map((job) => two.add(job))]);

      const all = [...fromOne, ...fromTwo].map((job) => job.jobId).sort();
      const ids = (store: typeof one) =>
        store
          .list()
          .map((job) => job.jobId)
          .sort();
      await waitFor(() => ids(one).join() === all.join(), { what: "the first server to list the second's jobs" });
      await waitFor(() => ids(two).join() === all.join(), { what: "the second server to list the first's jobs" });
      await using reopened = await openCronJobStore({ documents: (await place.open()).documents });
      expect(ids(reopened)).toEqual(all);
    });

    it("tells its subscribers of another server's change, and changes a job from what that server wrote", async () => {
      await using place = await backend.prepare();
      await using one = await openCronJobStore({ documents: (await place.open()).documents });
      await using two = await openCronJobStore({ documents: (await place.open()).documents });
      let told = 0;
      two.subscribe(() => {
        told += 1;
      });
      const job = makeJob();
      await one.add(job);
      await waitFor(() => told > 0 && two.get(job.jobId) !== undefined, { what: 'the second server to be told' });

      // A run recorded on one server and a pause on the other: both are kept.
      await one.modify(job.jobId, (current) => ({ ...current, runs: current.runs + 1 }));
      await two.modify(job.jobId, (current) => ({ ...current, enabled: false }));
      await waitFor(() => one.get(job.jobId)?.enabled === false, { what: 'the pause on the first server' });
      expect(one.get(job.jobId)).toMatchObject({ runs: 1, enabled: false });
      expect(two.get(job.jobId)).toMatchObject({ runs: 1, enabled: false });

      expect(await two.remove(job.jobId)).toBe(true);
      await waitFor(() => one.get(job.jobId) === undefined, { what: 'the removal on the first server' });
    });
  });
}

describe('cron job store: files only', () => {
  const files = stateBackends().find((backend) => backend.name === 'files') as StateBackend;
  const jobsPath = (dataDir: string) => join(dataDir, 'cron', 'jobs.json');

  it('writes the file with mode 0600 in a directory with mode 0700', async () => {
    await using place = await files.prepare();
    const dataDir = place.dataDir as string;
    await using store = await openCronJobStore({ documents: (await place.open()).documents });
    await store.add(makeJob());
    expect((await stat(jobsPath(dataDir))).mode & 0o777).toBe(0o600);
    expect((await stat(join(dataDir, 'cron'))).mode & 0o777).toBe(0o700);
  });

  it('keeps memory as it was when the file cannot be written', async () => {
    await using place = await files.prepare();
    const dataDir = place.dataDir as string;
    await using store = await openCronJobStore({ documents: (await place.open()).documents });
    const kept = makeJob();
    await store.add(kept);
    // A non-empty directory where the file goes: the atomic rename fails, even for root.
    await rm(jobsPath(dataDir));
    await mkdir(join(jobsPath(dataDir), 'blocker'), { recursive: true });

    const lost = makeJob();
    await expect(store.add(lost)).rejects.toThrow();
    await expect(store.put({ ...kept, runs: 5 })).rejects.toThrow();
    expect(await store.remove(kept.jobId).catch(() => 'refused')).toBe('refused');
    expect(store.list()).toEqual([kept]);

    // Once the disk takes writes again, the store goes on from what it held.
    await rm(jobsPath(dataDir), { recursive: true });
    await store.add(lost);
    expect(JSON.parse(await readFile(jobsPath(dataDir), 'utf8')).jobs).toEqual([kept, lost]);
  });
});

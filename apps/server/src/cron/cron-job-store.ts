import { createSilentLogger, type Logger } from '@molf/logging';
import { type CronJob, CronJobSchema, MAX_CRON_JOBS_PER_WORKER, MolfError } from '@molf/protocol';
import { z } from 'zod';
import type { StateDocuments } from '../state/index.ts';

/** The only version of `jobs.json` this server reads and writes. */
const FILE_VERSION = 1;

/** A job of the file that open could not use: its place in `jobs` and why. */
export type DamagedCronJob = { index: number; reason: string };

export type CronJobStore = {
  /** Where the jobs are, for messages: `{dataDir}/cron/jobs.json`, or the document in the database. */
  readonly path: string;
  /**
   * The jobs of the file that open could not use (invalid, or a second job with an id already
   * seen), as found at open. They stay in the file until the next change, which first keeps the
   * file as `jobs.json.damaged-<time>`.
   */
  readonly damaged: readonly DamagedCronJob[];
  /** Every job, in creation order (a copy). */
  list(filter?: { workerId?: string }): CronJob[];
  /** A copy of the job, or undefined for an unknown id. */
  get(jobId: string): CronJob | undefined;
  /**
   * Adds a job; refuses an invalid one (`invalid_input`), a duplicate id (`conflict`) and a
   * worker's job beyond `MAX_CRON_JOBS_PER_WORKER` (`busy`).
   */
  add(job: CronJob): Promise<void>;
  /**
   * Replaces a job by id, keeping its place in the order; refuses an invalid one (`invalid_input`),
   * an unknown id (`job_not_found`) and a move to a worker that is at the cap (`busy`).
   */
  put(job: CronJob): Promise<void>;
  /**
   * Changes a job from its latest state, inside the store's queue of writes: `change` gets the job
   * as it is when the write is made (after every change queued before, here or on another server),
   * so two changes made at once never undo each other. Resolves with the job written, or undefined
   * (nothing written) when there is no such job.
   */
  modify(jobId: string, change: (current: CronJob) => CronJob): Promise<CronJob | undefined>;
  /** Removes a job; false (and nothing written) for an unknown id. */
  remove(jobId: string): Promise<boolean>;
  /**
   * Calls `onChange` after the jobs were changed from elsewhere (another server on the database,
   * the file saved by hand) and are read again; returns the function that stops it.
   */
  subscribe(onChange: () => void): () => void;
  /** Waits for the pending writes; later writes are refused. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
};

export type CronJobStoreOptions = {
  /** Where the jobs are kept: `cron/jobs.json` of the data directory, or of the database. */
  documents: StateDocuments;
  /** Where damaged jobs are reported. Default: a logger that drops everything. */
  logger?: Logger;
  /** The clock that names the copy of a damaged file. Default: `() => new Date()`. */
  now?: () => Date;
};

/** The document that holds every cron job. */
export const CRON_JOBS_DOCUMENT = 'cron/jobs.json';

/** The jobs as last read or written, and the text they came from. */
type Held = { jobs: Map<string, CronJob>; text: string | undefined; damaged: boolean };

/**
 * Every cron job of the server in one document, `cron/jobs.json` (as a file: directory 0700, file
 * 0600): `{ "version": 1, "jobs": [...] }`, held in memory for reads. A change takes the
 * document's lock, reads it again (another server on the database, or a person, may have changed
 * it), validates the job, writes the whole document and only then takes effect in memory, so a
 * refused job or a failed write leaves memory and the document as they were, and two servers
 * never lose each other's job. Changes run one at a time in call order, so concurrent ones never
 * lose each other either. The document is watched: a change made elsewhere is read and told to
 * the subscribers (the scheduler aims its timer again).
 *
 * A file that cannot be read as jobs at all (not JSON, another shape, another version) makes open
 * throw `config_invalid` and is left untouched: starting with no jobs would erase it at the next
 * change (a change refuses it too). A file where only some jobs are invalid is used without them;
 * they are reported in `damaged` and the log, and the file is copied aside before it is first
 * rewritten, so the person can still recover them by hand. A document deleted while the server
 * runs is written again from the jobs in memory at the next change.
 */
export async function openCronJobStore(options: CronJobStoreOptions): Promise<CronJobStore> {
  const { documents } = options;
  const logger = options.logger ?? createSilentLogger();
  const now = options.now ?? (() => new Date());
  const path = documents.where(CRON_JOBS_DOCUMENT);
  const text = await readJobsText(documents);
  const loaded = text === undefined ? { jobs: [], damaged: [] } : parseJobsText(path, text);
  let held: Held = {
    jobs: new Map(loaded.jobs.map((job) => [job.jobId, job])),
    text,
    damaged: loaded.damaged.length > 0,
  };
  let writes: Promise<unknown> = Promise.resolve();
  let closed = false;
  const subscribers = new Set<() => void>();

  for (const { index, reason } of loaded.damaged) {
    logger.warn(
      { path, index, reason },
      'a cron job of the file is invalid and is not used; the file is copied aside before its next change',
    );
  }

  /**
   * The jobs as the document holds them now: those in memory while its text is the one they came
   * from (or it is gone), else the text read again. Throws `config_invalid` for a document that
   * cannot be read as jobs.
   */
  function current(text: string | undefined): Held {
    if (text === undefined || text === held.text) return held;
    const parsed = parseJobsText(path, text);
    return { jobs: new Map(parsed.jobs.map((job) => [job.jobId, job])), text, damaged: parsed.damaged.length > 0 };
  }

  function tell(): void {
    for (const onChange of subscribers) {
      try {
        onChange();
      } catch (error) {
        logger.error({ err: error }, 'a cron jobs subscriber failed');
      }
    }
  }

  /** Reads a document changed elsewhere and, when its jobs are new, makes them current. */
  async function refresh(): Promise<void> {
    try {
      const before = held;
      held = current(await readJobsText(documents));
      if (held !== before) tell();
    } catch (error) {
      logger.error({ err: error, path }, 'the changed cron jobs cannot be read; the jobs held before stay in use');
    }
  }

  const stopWatching = documents.watch(CRON_JOBS_DOCUMENT, () => {
    if (!closed) writes = writes.then(refresh);
  });

  /**
   * Changes waiting for the document. They are written together: every change queued while a
   * write runs goes into the next one (a thousand runs recorded in the same second make a few
   * writes, not a thousand rewrites of the file), applied in the order they came.
   */
  type Change = { apply: (draft: Map<string, CronJob>) => unknown; settle: (outcome: Outcome) => void };
  type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };
  let waiting: Change[] = [];

  /** Queues a change; it resolves once the document holds it (or rejects, nothing kept). */
  function change<T>(apply: (draft: Map<string, CronJob>) => T): Promise<T> {
    if (closed) return Promise.reject(new MolfError('internal', `the cron job store ${path} is closed`));
    const done = new Promise<T>((resolve, reject) => {
      waiting.push({
        apply,
        settle: (outcome) => (outcome.ok ? resolve(outcome.value as T) : reject(outcome.error)),
      });
    });
    if (waiting.length === 1) writes = writes.then(writeWaiting);
    return done;
  }

  /** Applies the waiting changes to the jobs as the document holds them, writes it once, then makes it current. */
  async function writeWaiting(): Promise<void> {
    const batch = waiting;
    waiting = [];
    const outcomes = new Map<Change, Outcome>();
    try {
      await documents.lock(CRON_JOBS_DOCUMENT, async () => {
        const base = current(await readJobsText(documents));
        if (base !== held) {
          held = base;
          tell();
        }
        const draft = new Map(base.jobs);
        const applied: Array<{ change: Change; value: unknown }> = [];
        let changed = false;
        for (const entry of batch) {
          try {
            // Each change checks before it touches the draft: a refused one leaves it as it was.
            const value = entry.apply(draft);
            applied.push({ change: entry, value });
            if (value !== false && value !== undefined) changed = true;
          } catch (error) {
            outcomes.set(entry, { ok: false, error });
          }
        }
        try {
          if (changed) await commit(base, draft);
          for (const { change: entry, value } of applied) outcomes.set(entry, { ok: true, value });
        } catch (error) {
          for (const { change: entry } of applied) outcomes.set(entry, { ok: false, error });
        }
      });
    } catch (error) {
      // The document could not be locked or read: nothing of the batch was written.
      for (const entry of batch) if (!outcomes.has(entry)) outcomes.set(entry, { ok: false, error });
    }
    // Told once the lock is let go: whoever waits on a change may read or lock the document at once.
    for (const entry of batch) entry.settle(outcomes.get(entry) ?? { ok: false, error: new Error('not applied') });
  }

  async function commit(base: Held, next: Map<string, CronJob>): Promise<void> {
    if (base.damaged && base.text !== undefined) {
      const copy = await copyAside(documents, base.text, now());
      logger.warn({ path, copy }, 'the cron jobs file with damaged jobs was copied aside');
    }
    const text = `${JSON.stringify({ version: FILE_VERSION, jobs: [...next.values()] }, null, 2)}\n`;
    await documents.write(CRON_JOBS_DOCUMENT, text);
    held = { jobs: next, text, damaged: false };
  }

  const jobs = () => held.jobs;

  function refuseAtCap(draft: Map<string, CronJob>, job: CronJob): void {
    let count = 0;
    for (const other of draft.values()) if (other.workerId === job.workerId && other.jobId !== job.jobId) count += 1;
    if (count >= MAX_CRON_JOBS_PER_WORKER) {
      throw new MolfError(
        'busy',
        `worker ${job.workerId} already has ${count} cron jobs, the most one worker may have (${MAX_CRON_JOBS_PER_WORKER}): remove one first`,
        { field: 'workerId' },
      );
    }
  }

  async function close(): Promise<void> {
    closed = true;
    stopWatching();
    subscribers.clear();
    await writes;
  }

  return {
    path,
    damaged: loaded.damaged,
    list(filter = {}) {
      const all = [...jobs().values()];
      const chosen = filter.workerId === undefined ? all : all.filter((job) => job.workerId === filter.workerId);
      return chosen.map((job) => structuredClone(job));
    },
    get(jobId) {
      const job = jobs().get(jobId);
      return job === undefined ? undefined : structuredClone(job);
    },
    async add(job) {
      const valid = parseJobOrThrow(job);
      await change((draft) => {
        if (draft.has(valid.jobId)) {
          throw new MolfError('conflict', `a cron job with the id ${valid.jobId} already exists`, { field: 'jobId' });
        }
        refuseAtCap(draft, valid);
        draft.set(valid.jobId, valid);
        return true;
      });
    },
    async put(job) {
      const valid = parseJobOrThrow(job);
      await change((draft) => {
        const existing = draft.get(valid.jobId);
        if (existing === undefined) {
          throw new MolfError('job_not_found', `there is no cron job ${valid.jobId}`, { field: 'jobId' });
        }
        if (existing.workerId !== valid.workerId) refuseAtCap(draft, valid);
        draft.set(valid.jobId, valid);
        return true;
      });
    },
    modify(jobId, update) {
      return change((draft) => {
        const existing = draft.get(jobId);
        if (existing === undefined) return undefined;
        const next = parseJobOrThrow(update(structuredClone(existing)));
        if (next.jobId !== jobId || next.workerId !== existing.workerId) {
          throw new MolfError('internal', `a change of cron job ${jobId} may not change its id or its worker`);
        }
        draft.set(jobId, next);
        return structuredClone(next);
      });
    },
    remove(jobId) {
      // False (nothing written) for an unknown job.
      return change((draft) => draft.delete(jobId));
    },
    subscribe(onChange) {
      subscribers.add(onChange);
      return () => subscribers.delete(onChange);
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}

/** The job as the schema keeps it (unknown keys dropped), or `invalid_input` naming the first bad field. */
function parseJobOrThrow(job: CronJob): CronJob {
  const parsed = CronJobSchema.safeParse(job);
  if (parsed.success) return parsed.data;
  const first = parsed.error.issues[0];
  const field = first === undefined ? undefined : first.path.map(String).join('.');
  throw new MolfError(
    'invalid_input',
    `the cron job ${typeof job?.jobId === 'string' ? job.jobId : '(no id)'} is invalid and was not stored: ${describeIssues(parsed.error)}`,
    field === undefined || field === '' ? {} : { field },
  );
}

function describeIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => (issue.path.length === 0 ? issue.message : `${issue.path.map(String).join('.')}: ${issue.message}`))
    .join('; ');
}

/** The outside of the file, checked before any job: `version` first, since a newer one may change the rest. */
const VersionedSchema = z.object({ version: z.number() });
const EnvelopeSchema = z.object({ version: z.literal(FILE_VERSION), jobs: z.array(z.unknown()) });

/** The document's text; undefined when there is none. Throws `config_invalid` when it cannot be read. */
async function readJobsText(documents: StateDocuments): Promise<string | undefined> {
  try {
    return await documents.read(CRON_JOBS_DOCUMENT);
  } catch (error) {
    if (error instanceof MolfError) throw error;
    throw new MolfError(
      'config_invalid',
      `cannot read the cron jobs file ${documents.where(CRON_JOBS_DOCUMENT)}: ${(error as Error).message}`,
      { cause: error },
    );
  }
}

/** The text's usable jobs and the damaged ones. Throws `config_invalid` for a text it cannot use at all. */
function parseJobsText(path: string, text: string): { jobs: CronJob[]; damaged: DamagedCronJob[] } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw refuseFile(path, `it is not valid JSON (${(error as Error).message})`, error);
  }
  const versioned = VersionedSchema.safeParse(value);
  if (!versioned.success) {
    throw refuseFile(
      path,
      `it is not { "version": ${FILE_VERSION}, "jobs": [...] } (${describeIssues(versioned.error)})`,
    );
  }
  if (versioned.data.version !== FILE_VERSION) {
    throw new MolfError(
      'config_invalid',
      `the cron jobs file ${path} has version ${versioned.data.version}, and this server reads only version ${FILE_VERSION}: ` +
        'a newer Molf server wrote it. Run that server, or move the file away to start with no cron jobs; it was left as it is',
    );
  }
  const envelope = EnvelopeSchema.safeParse(value);
  if (!envelope.success) {
    throw refuseFile(
      path,
      `it is not { "version": ${FILE_VERSION}, "jobs": [...] } (${describeIssues(envelope.error)})`,
    );
  }

  const jobs: CronJob[] = [];
  const damaged: DamagedCronJob[] = [];
  const seen = new Set<string>();
  envelope.data.jobs.forEach((entry, index) => {
    const parsed = CronJobSchema.safeParse(entry);
    if (!parsed.success) {
      damaged.push({ index, reason: describeIssues(parsed.error) });
    } else if (seen.has(parsed.data.jobId)) {
      damaged.push({ index, reason: `a second job with the id ${parsed.data.jobId} (the first one is used)` });
    } else {
      seen.add(parsed.data.jobId);
      jobs.push(parsed.data);
    }
  });
  return { jobs, damaged };
}

function refuseFile(path: string, reason: string, cause?: unknown): MolfError {
  return new MolfError(
    'config_invalid',
    `the cron jobs file ${path} cannot be used: ${reason}. It was left as it is: fix it, or move it away to start with no cron jobs`,
    cause === undefined ? undefined : { cause },
  );
}

/**
 * Keeps the text as `{jobs document}.damaged-{time}` (as a file, 0600), never over an earlier copy;
 * returns where it is.
 */
async function copyAside(documents: StateDocuments, text: string, at: Date): Promise<string> {
  const stamp = at.toISOString().replaceAll(':', '-');
  for (let attempt = 1; ; attempt += 1) {
    const name = `${CRON_JOBS_DOCUMENT}.damaged-${stamp}${attempt === 1 ? '' : `-${attempt}`}`;
    if (await documents.create(name, text)) return documents.where(name);
  }
}

import type { CronJob } from '@molf/protocol';
import { describe, expect, it } from 'vitest';
import {
  describeCronJobState,
  describeCronOnAsk,
  describeCronOutcome,
  describeCronRuns,
  toCronJobState,
} from './describe-cron-job.ts';

const job: CronJob = {
  jobId: 'cj_0123abcd',
  name: 'nightly tests',
  workerId: 'w_1' as CronJob['workerId'],
  schedule: { kind: 'every', everyMs: 3_600_000, anchor: '2026-11-24T10:00:00.000Z' },
  prompt: 'Run the tests',
  target: { type: 'new' },
  onAsk: 'deny',
  missed: 'run_once',
  enabled: true,
  createdBy: {},
  createdAt: '2026-11-24T10:00:00.000Z',
  updatedAt: '2026-11-24T10:00:00.000Z',
  nextRunAt: '2026-11-24T11:00:00.000Z',
  runs: 0,
  consecutiveFailures: 0,
};

describe('a scheduled prompt in words', () => {
  it('is active while it has a next run, and done when it has none', () => {
    expect(toCronJobState(job)).toEqual({ type: 'active' });
    const { nextRunAt: _next, ...ranOut } = job;
    expect(toCronJobState(ranOut)).toEqual({ type: 'done' });
  });

  it('is paused when disabled, whatever its failures', () => {
    expect(toCronJobState({ ...job, enabled: false, consecutiveFailures: 3 })).toEqual({ type: 'paused' });
  });

  it('is failing with its failures in a row, and names the retry only when its slot is retried', () => {
    const retried = toCronJobState({
      ...job,
      consecutiveFailures: 3,
      retrySlot: '2026-11-24T10:00:00.000Z',
      nextRunAt: '2026-11-24T10:02:00.000Z',
    });
    expect(describeCronJobState(retried)).toBe('failing: 3 failures in a row, retried at 2026-11-24 10:02 UTC');
    // A slot given up (its session gone): the next run is the next slot, not a retry.
    expect(describeCronJobState(toCronJobState({ ...job, consecutiveFailures: 1 }))).toBe('failing: 1 failure');
  });

  it('counts runs of the most when there is a limit', () => {
    expect(describeCronRuns({ runs: 2 })).toBe('2');
    expect(describeCronRuns({ runs: 2, maxRuns: 5 })).toBe('2 of 5');
  });

  it('says what a run does with a call that asks', () => {
    expect(describeCronOnAsk({ onAsk: 'deny' })).toBe('deny at once');
    expect(describeCronOnAsk({ onAsk: 'wait' })).toBe('wait 10m for a person, then deny');
    expect(describeCronOnAsk({ onAsk: 'wait', onAskWaitMs: 90_000 })).toBe('wait 90s for a person, then deny');
  });

  it('says how a run went, with the reason of a failure', () => {
    expect(describeCronOutcome({ outcome: 'started' })).toBe('started');
    expect(describeCronOutcome({ outcome: 'queued' })).toBe('queued behind the running turn');
    expect(describeCronOutcome({ outcome: 'failed', reason: 'worker w_1 is offline' })).toBe(
      'failed: worker w_1 is offline',
    );
  });
});

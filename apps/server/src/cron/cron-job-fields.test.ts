import { randomUUID } from 'node:crypto';
import type { WorkerId } from '@molf/protocol';
import { describe, expect, it } from 'vitest';
import { newCronJob } from './cron-job-fields.ts';

const context = {
  now: new Date('2026-11-25T10:00:00Z'),
  defaultTimezone: 'UTC',
  minIntervalMs: 60_000,
  createdBy: {},
  defaultTarget: { type: 'new' } as const,
};

describe('a new cron job', () => {
  it('is named after its schedule and the first line of its prompt, shown on one line', () => {
    const job = (prompt: string) =>
      newCronJob({ workerId: randomUUID() as WorkerId, schedule: { every: '5m' }, prompt }, context).name;
    expect(job('run the tests\nand report')).toBe('every 5m: run the tests');
    // A carriage return ends the line too; an ESC colour code or a NUL is not printed as it is.
    expect(job('red\r\nsecond')).toBe('every 5m: red');
    expect(job('\u001b[31mred\u0000 alert')).toBe('every 5m: ?[31mred? alert');
    expect(job('x'.repeat(200))).toHaveLength(80);
  });
});

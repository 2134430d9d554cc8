import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CronAddInputSchema, CronUpdateInputSchema } from './cron.ts';
import { printableName } from './one-line-name.ts';
import { SessionCreateInputSchema, SessionRenameInputSchema } from './sessions.ts';
import { WorkerRegistrationSchema } from './worker.ts';

const workerId = randomUUID();
const sessionId = randomUUID();

/** Each input that carries a name a person or a program gives, with that name. */
const inputs: Array<[string, (name: string) => { success: boolean; error?: { message: string } }]> = [
  ['a new session', (name) => SessionCreateInputSchema.safeParse({ workerId, name })],
  ['a session renamed', (name) => SessionRenameInputSchema.safeParse({ sessionId, name })],
  [
    'a worker registering',
    (name) =>
      WorkerRegistrationSchema.safeParse({
        workerId,
        instanceId: randomUUID(),
        name,
        workdir: '/srv/app',
        tools: [],
        version: '0.1.0',
      }),
  ],
  [
    'a new cron job',
    (name) => CronAddInputSchema.safeParse({ workerId, name, schedule: { every: '1h' }, prompt: 'check' }),
  ],
  ['a cron job changed', (name) => CronUpdateInputSchema.safeParse({ jobId: 'cj_0123456789abcdef', name })],
];

describe('names given in inputs', () => {
  it.each(inputs)('%s: refuses control characters, which would break the line or drive a terminal', (_what, parse) => {
    for (const name of [
      'bad\u0000name',
      'two\nlines',
      'red \u001b[31mtext',
      'tab\tbed',
      'del\u007f',
      'c1 \u0085 next line',
    ]) {
      const parsed = parse(name);
      expect(parsed.success, JSON.stringify(name)).toBe(false);
      expect(parsed.error?.message).toContain('holds no control characters');
    }
  });

  it.each(inputs)('%s: takes any other text, accents and emoji included', (_what, parse) => {
    for (const name of ['nightly build', 'café ☕', 'Überprüfung 🦊', '数据 清理', 'a-b_c.d@host']) {
      expect(parse(name).success, name).toBe(true);
    }
  });
});

describe('printableName', () => {
  it('replaces each control character of a name made from elsewhere, and leaves the rest', () => {
    expect(printableName('my\nproject\u001b[31m')).toBe('my?project?[31m');
    expect(printableName('café 🦊')).toBe('café 🦊');
  });
});

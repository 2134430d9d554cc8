import { describe, expect, it } from 'vitest';
import { ApproveInputSchema, MAX_ANSWER_PATTERN_CHARS } from './approvals.ts';

const base = { sessionId: 's1', approvalId: 's1:abc' };

function issue(input: Record<string, unknown>): { path: string; message: string } | undefined {
  const parsed = ApproveInputSchema.safeParse({ ...base, ...input });
  if (parsed.success) return undefined;
  const [first] = parsed.error.issues;
  return first === undefined ? undefined : { path: first.path.join('.'), message: first.message };
}

describe('ApproveInputSchema', () => {
  it('takes edited patterns with "session" and "always", and an expiry with "always"', () => {
    expect(ApproveInputSchema.parse({ ...base, scope: 'always', patterns: ['npm run *'] })).toEqual({
      ...base,
      scope: 'always',
      patterns: ['npm run *'],
    });
    expect(issue({ scope: 'session', patterns: ['npm test', 'git status'] })).toBeUndefined();
    expect(issue({ scope: 'always', expiresAt: '2026-11-24T18:00:00.000Z' })).toBeUndefined();
    expect(issue({ scope: 'always', expiresAt: '2026-11-24T19:00:00+01:00' })).toBeUndefined();
  });

  it('still defaults to "once" without patterns or expiry', () => {
    expect(ApproveInputSchema.parse(base)).toEqual({ ...base, scope: 'once' });
  });

  it.each([
    ['patterns with "once"', { scope: 'once', patterns: ['ls'] }, 'patterns', 'not "once"'],
    ['patterns when the scope defaults to "once"', { patterns: ['ls'] }, 'patterns', 'not "once"'],
    ['an empty list of patterns', { scope: 'always', patterns: [] }, 'patterns', ''],
    [
      'seventeen patterns',
      { scope: 'always', patterns: Array.from({ length: 17 }, (_, i) => `p${i}`) },
      'patterns',
      '',
    ],
    ['an empty pattern', { scope: 'always', patterns: ['ls', ''] }, 'patterns.1', ''],
    [
      'a pattern over the length limit',
      { scope: 'always', patterns: ['x'.repeat(MAX_ANSWER_PATTERN_CHARS + 1)] },
      'patterns.0',
      '',
    ],
    [
      'a pattern given twice',
      { scope: 'session', patterns: ['ls', 'ls'] },
      'patterns.1',
      'the pattern "ls" is given twice',
    ],
    [
      'an expiry with "session"',
      { scope: 'session', expiresAt: '2026-11-24T18:00:00Z' },
      'expiresAt',
      'only to rules saved with scope "always"',
    ],
    ['an expiry that is no date', { scope: 'always', expiresAt: 'tomorrow' }, 'expiresAt', ''],
    ['an expiry without a time zone', { scope: 'always', expiresAt: '2026-11-24T18:00:00' }, 'expiresAt', ''],
    ['an expiry on a day that does not exist', { scope: 'always', expiresAt: '2026-02-30T18:00:00Z' }, 'expiresAt', ''],
  ])('refuses %s at its field', (_title, input, path, message) => {
    const found = issue(input);
    expect(found?.path).toBe(path);
    expect(found?.message).toContain(message);
  });
});

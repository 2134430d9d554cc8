import { describe, expect, it } from 'vitest';
import { createApprovalWatchers } from './approval-watchers.ts';

const target = { sessionId: 's1', workerId: 'w1' };

describe('approval watchers', () => {
  it('sees a session watched by a subscription to all, to its worker or to itself, and not by others', () => {
    const watchers = createApprovalWatchers();
    expect(watchers.watching(target)).toBe(false);
    const other = watchers.add({ sessionId: 's2' });
    const otherWorker = watchers.add({ workerId: 'w2' });
    expect(watchers.watching(target)).toBe(false);
    for (const filter of [{}, { workerId: 'w1' }, { sessionId: 's1' }, { sessionId: 's1', workerId: 'w1' }]) {
      const stop = watchers.add(filter);
      expect(watchers.watching(target)).toBe(true);
      stop();
      expect(watchers.watching(target)).toBe(false);
    }
    other();
    otherWorker();
  });

  it('counts two equal subscriptions apart: one ending leaves the other watching', () => {
    const watchers = createApprovalWatchers();
    const first = watchers.add({ sessionId: 's1' });
    const second = watchers.add({ sessionId: 's1' });
    first();
    expect(watchers.watching(target)).toBe(true);
    second();
    expect(watchers.watching(target)).toBe(false);
  });
});

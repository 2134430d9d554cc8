import { describe, expect, it } from 'vitest';
import { createTurnsByKey } from './turns-by-key.ts';

describe('createTurnsByKey', () => {
  it('runs the tasks of one key one after another, in the order they came', async () => {
    const oneAtATime = createTurnsByKey();
    const log: string[] = [];
    const first = Promise.withResolvers<void>();
    const a = oneAtATime('k', async () => {
      log.push('a starts');
      await first.promise;
      log.push('a ends');
      return 'a';
    });
    const b = oneAtATime('k', async () => {
      log.push('b runs');
      return 'b';
    });
    await new Promise((resolveSoon) => setTimeout(resolveSoon, 20));
    expect(log).toEqual(['a starts']);
    first.resolve();
    expect(await Promise.all([a, b])).toEqual(['a', 'b']);
    expect(log).toEqual(['a starts', 'a ends', 'b runs']);
  });

  it('runs the next task after one that failed, and gives each caller its own outcome', async () => {
    const oneAtATime = createTurnsByKey();
    const failed = oneAtATime('k', async () => {
      throw new Error('no');
    });
    const next = oneAtATime('k', async () => 'ran');
    await expect(failed).rejects.toThrow('no');
    await expect(next).resolves.toBe('ran');
  });

  it('runs tasks of different keys side by side', async () => {
    const oneAtATime = createTurnsByKey();
    const held = Promise.withResolvers<void>();
    const blocked = oneAtATime('one', () => held.promise);
    await expect(oneAtATime('two', async () => 'not waiting')).resolves.toBe('not waiting');
    held.resolve();
    await blocked;
  });
});

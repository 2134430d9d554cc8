import { describe, expect, it } from 'vitest';
import { closeInOrder } from './close-in-order.ts';

describe('closeInOrder', () => {
  it('runs every step in order, each after the one before has finished', async () => {
    const done: string[] = [];
    await closeInOrder([
      async () => {
        await Promise.resolve();
        done.push('first');
      },
      () => done.push('second'),
    ]);
    expect(done).toEqual(['first', 'second']);
  });

  it('still runs the later steps when one fails, then rethrows that failure as it is', async () => {
    const done: string[] = [];
    const failure = new Error('the audit log cannot be closed');
    const closing = closeInOrder([
      () => done.push('agent'),
      () => {
        throw failure;
      },
      async () => done.push('sessions'),
    ]);
    await expect(closing).rejects.toBe(failure);
    expect(done).toEqual(['agent', 'sessions']);
  });

  it('keeps every failure when several steps fail', async () => {
    const closing = closeInOrder([
      () => Promise.reject(new Error('one')),
      () => {
        throw new Error('two');
      },
    ]);
    await expect(closing).rejects.toMatchObject({
      name: 'AggregateError',
      errors: [expect.objectContaining({ message: 'one' }), expect.objectContaining({ message: 'two' })],
    });
  });
});

import type { SessionMessage } from '@molf/protocol';
import { describe, expect, it } from 'vitest';
import { createHistoryCache } from './history-cache.ts';

const message = (id: string): SessionMessage => ({ id, at: new Date(0).toISOString(), role: 'user', text: id });

function clock() {
  let at = 0;
  return { now: () => at, advance: (ms: number) => (at += ms) };
}

describe('the history cache', () => {
  it('keeps a history and the messages appended to it', () => {
    const cache = createHistoryCache({});
    cache.set('s1', { messages: [message('a')], size: 10, inUse: true });
    cache.append('s1', message('b'), 5);
    expect(cache.get('s1')?.map((kept) => kept.id)).toEqual(['a', 'b']);
    expect(cache.size()).toBe(15);
  });

  it('ignores messages for a history it does not keep', () => {
    const cache = createHistoryCache({});
    cache.append('s1', message('a'), 5);
    expect(cache.get('s1')).toBeUndefined();
    expect(cache.size()).toBe(0);
  });

  it('evicts an idle history unused for the idle time, never one in use', () => {
    const time = clock();
    const cache = createHistoryCache({ idleMs: 1_000, now: time.now });
    cache.set('idle', { messages: [], size: 1, inUse: false });
    cache.set('busy', { messages: [], size: 1, inUse: true });
    time.advance(999);
    cache.sweep();
    expect(cache.get('idle')).toBeDefined();
    time.advance(1_000);
    cache.sweep();
    expect(cache.get('idle')).toBeUndefined();
    expect(cache.get('busy')).toBeDefined();
  });

  it('evicts the least recently used idle histories while over budget', () => {
    const time = clock();
    const cache = createHistoryCache({ maxSize: 25, now: time.now });
    cache.set('old', { messages: [], size: 10, inUse: false });
    time.advance(1);
    cache.set('newer', { messages: [], size: 10, inUse: false });
    time.advance(1);
    cache.get('old');
    time.advance(1);
    cache.set('third', { messages: [], size: 10, inUse: false });
    expect(cache.get('newer')).toBeUndefined();
    expect(cache.get('old')).toBeDefined();
    expect(cache.get('third')).toBeDefined();
    expect(cache.size()).toBe(20);
  });

  it('keeps a history in use over budget and evicts it once idle', () => {
    const cache = createHistoryCache({ maxSize: 5 });
    cache.set('s1', { messages: [], size: 50, inUse: true });
    expect(cache.get('s1')).toBeDefined();
    cache.setInUse('s1', false);
    expect(cache.get('s1')).toBeUndefined();
  });
});

import type { SessionMessage } from '@molf/protocol';
import { describe, expect, it } from 'vitest';
import { historyPage } from './history-page.ts';

const at = '2026-11-24T00:00:00.000Z';
const user = (id: string): SessionMessage => ({ id, at, role: 'user', text: id });
const call = (id: string): SessionMessage => ({
  id,
  at,
  role: 'assistant',
  text: '',
  model: 'fake/m',
  toolCalls: [
    { toolCallId: `${id}-c1`, toolName: 'glob', args: {} },
    { toolCallId: `${id}-c2`, toolName: 'glob', args: {} },
  ],
});
const result = (id: string, toolCallId: string): SessionMessage => ({
  id,
  at,
  role: 'tool',
  toolCallId,
  toolName: 'glob',
  output: '',
});

/** u0 a1 (two calls) r2 r3 u4 a5 (two calls) r6 r7 */
const history = [
  user('u0'),
  call('a1'),
  result('r2', 'a1-c1'),
  result('r3', 'a1-c2'),
  user('u4'),
  call('a5'),
  result('r6', 'a5-c1'),
  result('r7', 'a5-c2'),
];
const ids = (page: { messages: SessionMessage[] }) => page.messages.map((message) => message.id);

describe('historyPage', () => {
  it('gives the whole history without a limit', () => {
    expect(historyPage(history, {})).toEqual({ messages: history, start: 0, total: 8 });
  });

  it('gives the last messages with a limit, and the older ones before a page’s start', () => {
    const last = historyPage(history, { limit: 4 });
    expect(ids(last)).toEqual(['u4', 'a5', 'r6', 'r7']);
    expect(last).toMatchObject({ start: 4, total: 8 });
    const older = historyPage(history, { limit: 4, before: last.start });
    expect(ids(older)).toEqual(['u0', 'a1', 'r2', 'r3']);
    expect(older.start).toBe(0);
  });

  it('never starts with a tool result: the page starts at the call’s message', () => {
    for (const limit of [1, 2]) {
      const page = historyPage(history, { limit });
      expect(ids(page)[0]).toBe('a5');
      expect(page.start).toBe(5);
    }
    const older = historyPage(history, { limit: 1, before: 4 });
    expect(ids(older)).toEqual(['a1', 'r2', 'r3']);
  });

  it('takes a limit above the history, and a `before` past its end, as the whole of it', () => {
    expect(historyPage(history, { limit: 100 }).start).toBe(0);
    expect(ids(historyPage(history, { limit: 2, before: 99 }))).toEqual(['a5', 'r6', 'r7']);
    expect(historyPage([], { limit: 10 })).toEqual({ messages: [], start: 0, total: 0 });
  });
});

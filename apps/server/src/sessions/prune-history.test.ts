import type { SessionMessage } from '@molf/protocol';
import { describe, expect, it } from 'vitest';
import { CLEARED_NOTE, pruneHistory } from './prune-history.ts';

let counter = 0;
const at = () => new Date().toISOString();
const user = (text: string): SessionMessage => ({ id: `u${counter++}`, at: at(), role: 'user', text });
const call = (id: string): SessionMessage => ({
  id: `a${counter++}`,
  at: at(),
  role: 'assistant',
  text: '',
  toolCalls: [{ toolCallId: id, toolName: 'read_file', args: { path: `${id}.txt` } }],
  model: 'fake/m',
});
const result = (id: string, size: number): SessionMessage => ({
  id: `t${counter++}`,
  at: at(),
  role: 'tool',
  toolCallId: id,
  toolName: 'read_file',
  output: `${id}:`.padEnd(size, 'x'),
});

function history(sizes: number[]): SessionMessage[] {
  return [
    user('start'),
    ...sizes.flatMap((size, index) => [call(`c${index}`), result(`c${index}`, size)]),
    user('next'),
  ];
}

describe('pruning the model view of a long history', () => {
  it('leaves a history under 30 % of the context window as it is', () => {
    const messages = history([10_000, 10_000]);
    expect(pruneHistory(messages, { contextTokens: 128_000 })).toEqual(messages);
  });

  it('trims large old tool results to head and tail from 30 %, keeping the last three steps whole', () => {
    const messages = history([20_000, 20_000, 20_000, 20_000, 20_000]);
    const pruned = pruneHistory(messages, { contextTokens: 60_000 });
    const outputs = pruned.flatMap((message) => (message.role === 'tool' ? [message.output] : []));
    expect(outputs[0]).toMatch(/^c0:x+\n\[… 17000 characters of this old tool result cut to save context …\]\nx+$/);
    expect(outputs[0]?.length).toBeLessThan(3_200);
    expect(outputs[1]?.length).toBeLessThan(3_200);
    expect(outputs.slice(2).map((output) => output.length)).toEqual([20_000, 20_000, 20_000]);
    // The stored history is untouched.
    expect(messages.flatMap((message) => (message.role === 'tool' ? [message.output.length] : []))).toEqual([
      20_000, 20_000, 20_000, 20_000, 20_000,
    ]);
  });

  it('clears old tool results from 50 % when that frees enough', () => {
    const messages = history([40_000, 40_000, 5_000, 5_000, 5_000]);
    const pruned = pruneHistory(messages, { contextTokens: 40_000 });
    const outputs = pruned.flatMap((message) => (message.role === 'tool' ? [message.output] : []));
    expect(outputs.slice(0, 2)).toEqual([CLEARED_NOTE, CLEARED_NOTE]);
    expect(outputs.slice(2).map((output) => output.length)).toEqual([5_000, 5_000, 5_000]);
  });

  it('never trims or clears a loaded skill, however old and large, even when aggressive', () => {
    const skill: SessionMessage = {
      id: `t${counter++}`,
      at: at(),
      role: 'tool',
      toolCallId: 'sk',
      toolName: 'skill',
      output: 'skill:'.padEnd(40_000, 's'),
    };
    const messages = [
      user('start'),
      { ...call('sk'), toolCalls: [] },
      skill,
      ...history([40_000, 5_000, 5_000, 5_000]).slice(1),
    ];
    for (const aggressive of [false, true]) {
      const pruned = pruneHistory(messages, { contextTokens: 40_000, aggressive });
      expect(pruned.find((message) => message.role === 'tool' && message.toolName === 'skill')).toEqual(skill);
    }
  });

  it('clears every old tool result and cuts old long prompts when asked to be aggressive, keeping the last prompt', () => {
    const messages = [user('x'.repeat(10_000)), ...history([100, 100, 100, 100]).slice(1), user('y'.repeat(10_000))];
    const pruned = pruneHistory(messages, { contextTokens: 128_000, aggressive: true });
    const first = pruned[0];
    expect(first?.role === 'user' && first.text).toContain('characters of this old prompt cut to save context');
    expect(pruned.at(-1)).toEqual(messages.at(-1));
    const outputs = pruned.flatMap((message) => (message.role === 'tool' ? [message.output] : []));
    expect(outputs[0]).toBe(CLEARED_NOTE);
    expect(outputs.at(-1)).toHaveLength(100);
  });
});

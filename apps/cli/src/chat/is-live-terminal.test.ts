import { describe, expect, it } from 'vitest';
import { isLiveTerminal } from './is-live-terminal.ts';

describe('whether the chat draws on the terminal', () => {
  const tty = { isTTY: true };
  const pipe = { isTTY: false };

  it('draws when stdin and stdout are a terminal', () => {
    expect(isLiveTerminal(tty, tty, { TERM: 'xterm-256color' })).toBe(true);
    expect(isLiveTerminal(tty, tty, {})).toBe(true);
  });

  it('reads lines on a pipe at either end', () => {
    expect(isLiveTerminal(pipe, tty, { TERM: 'xterm-256color' })).toBe(false);
    expect(isLiveTerminal(tty, pipe, { TERM: 'xterm-256color' })).toBe(false);
  });

  it('reads lines on a terminal that moves no cursor (TERM=dumb)', () => {
    expect(isLiveTerminal(tty, tty, { TERM: 'dumb' })).toBe(false);
  });
});

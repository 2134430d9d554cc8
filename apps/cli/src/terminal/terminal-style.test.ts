import { describe, expect, it } from 'vitest';
import { colorLevel, createTerminalStyle } from './terminal-style.ts';

const terminal = { isTTY: true, getColorDepth: () => 8 };
const pipe = { isTTY: false };

describe('the colour level', () => {
  it('colours a terminal, as many colours as it reports, and never a pipe by itself', () => {
    expect(colorLevel(terminal, {})).toBe(2);
    expect(colorLevel({ isTTY: true, getColorDepth: () => 24 }, {})).toBe(3);
    expect(colorLevel(pipe, {})).toBe(0);
    expect(colorLevel(terminal, { TERM: 'dumb' })).toBe(0);
  });

  it('never colours with NO_COLOR set, even when FORCE_COLOR is set too', () => {
    expect(colorLevel(terminal, { NO_COLOR: '1' })).toBe(0);
    expect(colorLevel(terminal, { NO_COLOR: '1', FORCE_COLOR: '1' })).toBe(0);
    // An empty NO_COLOR is "not set" (no-color.org).
    expect(colorLevel(terminal, { NO_COLOR: '' })).toBe(2);
  });

  it('colours a pipe when FORCE_COLOR asks, and not when it says 0 or false', () => {
    expect(colorLevel(pipe, { FORCE_COLOR: '1' })).toBe(1);
    expect(colorLevel(pipe, { FORCE_COLOR: '' })).toBe(1);
    expect(colorLevel(pipe, { FORCE_COLOR: '3' })).toBe(3);
    expect(colorLevel(terminal, { FORCE_COLOR: '0' })).toBe(0);
    expect(colorLevel(terminal, { FORCE_COLOR: 'false' })).toBe(0);
  });
});

describe('the terminal style', () => {
  it('paints with escape codes at a colour level, and leaves text as it is at level 0', () => {
    expect(createTerminalStyle(1).fail('no')).toBe('\u001b[31mno\u001b[39m');
    expect(createTerminalStyle(0).fail('no')).toBe('no');
  });
});

import { describe, expect, it } from 'vitest';
import { expandTabs, toRows } from './terminal-rows.ts';

describe('the rows of a live line', () => {
  it('turns each tab into the spaces up to the next multiple of 8 cells, wide characters counted as two', () => {
    expect(expandTabs('a\tb')).toBe(`a${' '.repeat(7)}b`);
    expect(expandTabs('\t\tx')).toBe(`${' '.repeat(16)}x`);
    expect(expandTabs('日本\tx')).toBe(`日本${' '.repeat(4)}x`);
    // A colour code takes no cell.
    expect(expandTabs('\u001b[1m›\u001b[22m \tx')).toBe(`\u001b[1m›\u001b[22m ${' '.repeat(6)}x`);
  });

  it('cuts a line by cells, keeps colour codes in their row, and starts a wide character that does not fit on the next row', () => {
    expect(toRows('abcdef', 4)).toEqual(['abcd', 'ef']);
    expect(toRows('\u001b[31mabcdef\u001b[39m', 4)).toEqual(['\u001b[31mabcd', 'ef\u001b[39m']);
    expect(toRows('abc日本', 4)).toEqual(['abc', '日本']);
    expect(toRows('short', 10)).toEqual(['short']);
    expect(toRows('', 10)).toEqual(['']);
  });
});

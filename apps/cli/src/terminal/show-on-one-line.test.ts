import { describe, expect, it } from 'vitest';
import { showOnOneLine } from './show-on-one-line.ts';

describe('a name shown on one line', () => {
  it('shows escape sequences, newlines, tabs and carriage returns as text', () => {
    expect(showOnOneLine('a\u001b]0;title\u0007b')).toBe('a\\x1b]0;title\\x07b');
    expect(showOnOneLine('one\ntwo\tthree\r')).toBe('one\\x0atwo\\x09three\\x0d');
    expect(showOnOneLine('\u009b31m')).toBe('\\x9b31m');
  });

  it('shows invisible format characters and lone surrogates, which could make a name read as another', () => {
    expect(showOnOneLine('admin\u202etxt.exe')).toBe('admin\\u{202e}txt.exe');
    expect(showOnOneLine('lap\u200btop')).toBe('lap\\u{200b}top');
    expect(showOnOneLine('cut \ud83d')).toBe('cut \\u{d83d}');
  });

  it('leaves printable text as it is, wide characters and emoji included', () => {
    expect(showOnOneLine('Bücherregal 日本語 😀 build-box')).toBe('Bücherregal 日本語 😀 build-box');
  });
});

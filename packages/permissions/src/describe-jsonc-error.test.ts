import { type ParseErrorCode, printParseErrorCode } from 'jsonc-parser';
import { describe, expect, it } from 'vitest';
import { describeJsoncError } from './describe-jsonc-error.ts';
import { safeParseJsonc } from './parse-jsonc.ts';

describe('JSONC syntax errors in words', () => {
  it('gives every parser error code a sentence of its own, never the code’s name', () => {
    const sentences = new Set<string>();
    // The codes run from 1 (InvalidSymbol) to 16 (InvalidCharacter).
    for (let code = 1; code <= 16; code += 1) {
      const name = printParseErrorCode(code as ParseErrorCode);
      const sentence = describeJsoncError(code as ParseErrorCode);
      expect(name).not.toBe('<unknown ParseErrorCode>');
      expect(sentence).not.toContain(name);
      expect(sentence).not.toBe(describeJsoncError(999 as ParseErrorCode));
      sentences.add(sentence);
    }
    expect(sentences.size).toBe(16);
  });

  it.each([
    ['{\n  "a": "allow"\n  "b": "ask"\n}', 'a comma is missing between two entries', 3, 3],
    ['{\n  "a" "allow"\n}', 'a colon is missing between a name and its value ("read_file": "allow")', 2, 7],
    ['{\n  "a": {\n    "x": "ask"\n', 'an object is not closed: a } is missing', 4, 1],
    ['{ "a": ["x"', 'a list is not closed: a ] is missing', 1, 12],
    ["{ 'a': 'allow' }", 'this is not JSON: names and text need double quotes', 1, 3],
    ['{ "a": }', 'a value is missing here', 1, 8],
    ['{ "a": "allow }', 'a string is not closed', 1, 8],
    ['{ "a": 1 }\n}', 'the file goes on after its object is closed', 2, 1],
    ['{ /* open', 'a /* comment is not closed with */', 1, 3],
    ['{ "a": "\\q" }', 'a backslash starts an escape JSON does not know', 1, 8],
  ])('says what is wrong in %j, and where', (text, sentence, line, column) => {
    const read = safeParseJsonc(text);
    if (read.ok) throw new Error('expected a syntax error');
    expect(read.error.message).toContain(sentence);
    expect({ line: read.error.line, column: read.error.column }).toEqual({ line, column });
  });
});

import { type ParseErrorCode, printParseErrorCode } from 'jsonc-parser';

type ParseErrorName = Exclude<ReturnType<typeof printParseErrorCode>, '<unknown ParseErrorCode>'>;

/**
 * What each of jsonc-parser's syntax errors means to a person editing the file by hand, said where
 * the parser stopped (the line and column go with it). Keyed by the code's name: the codes are a
 * `const enum` a type-stripping build cannot read.
 */
const SENTENCES: Record<ParseErrorName, string> = {
  InvalidSymbol:
    'this is not JSON: names and text need double quotes ("allow", not \'allow\' or allow), and a value is a string, number, true, false, null, object or list',
  InvalidNumberFormat: 'a number is written wrongly (such as 1. or 01)',
  PropertyNameExpected: 'a name in double quotes is expected here, such as "read_file" (or a stray comma before a })',
  ValueExpected: 'a value is missing here: a string in double quotes, a number, an object { … } or a list [ … ]',
  ColonExpected: 'a colon is missing between a name and its value ("read_file": "allow")',
  CommaExpected: 'a comma is missing between two entries',
  CloseBraceExpected: 'an object is not closed: a } is missing',
  CloseBracketExpected: 'a list is not closed: a ] is missing',
  EndOfFileExpected: 'the file goes on after its object is closed: everything must be inside one { … }',
  InvalidCommentToken: 'a comment is not allowed here',
  UnexpectedEndOfComment: 'a /* comment is not closed with */',
  UnexpectedEndOfString:
    'a string is not closed: a double quote is missing (a string cannot go past the end of its line)',
  UnexpectedEndOfNumber: 'a number ends too early (such as 1e or a lone -)',
  InvalidUnicode: 'a \\u escape needs four hexadecimal digits (such as \\u00e9)',
  InvalidEscapeCharacter:
    'a backslash starts an escape JSON does not know: write \\\\ for a backslash, \\" for a double quote',
  InvalidCharacter: 'a string holds a control character (a tab or a line break): write it as \\t or \\n',
};

/** A sentence for a jsonc-parser syntax error code (never the code's bare name). */
export function describeJsoncError(code: ParseErrorCode): string {
  const name = printParseErrorCode(code);
  return name === '<unknown ParseErrorCode>' ? 'the file is not valid JSON here' : SENTENCES[name];
}

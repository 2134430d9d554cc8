import { type ParseError, parse, printParseErrorCode } from 'jsonc-parser';
import { describeJsoncError } from './describe-jsonc-error.ts';

/** Line and column (from 1) of an offset in a text. */
export function textPosition(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let index = 0; index < offset && index < text.length; index += 1) {
    if (text.charCodeAt(index) === 10) {
      line += 1;
      lineStart = index + 1;
    }
  }
  return { line, column: offset - lineStart + 1 };
}

/**
 * A JSONC text (comments, trailing commas) as a value, or where its first syntax error is and what
 * it is (`code`, jsonc-parser's name; `message`, a sentence for people):
 * the one reader of the config files Molf takes (`.mcp.json`, the server config).
 */
export function safeParseJsonc(
  text: string,
):
  | { ok: true; value: unknown }
  | { ok: false; error: { code: string; message: string; line: number; column: number; offset: number } } {
  const errors: ParseError[] = [];
  const value: unknown = parse(text, errors, { allowTrailingComma: true });
  const first = errors[0];
  if (first === undefined) return { ok: true, value };
  return {
    ok: false,
    error: {
      code: printParseErrorCode(first.error),
      message: describeJsoncError(first.error),
      offset: first.offset,
      ...textPosition(text, first.offset),
    },
  };
}

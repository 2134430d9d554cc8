import { beforeAll, describe, expect, it } from 'vitest';
import { createFakeClock } from '../permission-test-kit.ts';
import { loadShellParser, type ShellParser } from './shell-parser.ts';

let parser: ShellParser;

beforeAll(async () => {
  parser = await loadShellParser();
});

// Long enough that the parser reports its progress (it does not for a few words).
const LONG_LINE = `${'ls -la src && '.repeat(200)}ls`;

describe('the parse time limit, measured by the given clock', () => {
  it('cancels a parse once the clock passes the time limit', () => {
    const clock = createFakeClock({ tick: 1 });
    expect(parser.parse(LONG_LINE, { timeoutMs: 2, now: clock.now })).toBeUndefined();
  });

  it('parses the same line again after a cancelled parse', () => {
    const clock = createFakeClock({ tick: 1 });
    expect(parser.parse(LONG_LINE, { timeoutMs: 2, now: clock.now })).toBeUndefined();
    const tree = parser.parse(LONG_LINE, { timeoutMs: 2, now: createFakeClock().now });
    expect(tree?.rootNode.hasError).toBe(false);
    tree?.delete();
  });

  it('finishes a parse while the clock stands still, even with no time at all', () => {
    const tree = parser.parse(LONG_LINE, { timeoutMs: 0, now: createFakeClock().now });
    expect(tree?.rootNode.hasError).toBe(false);
    tree?.delete();
  });
});

import { beforeAll, describe, expect, it } from 'vitest';
import {
  createFakeClock,
  createWarmEngine,
  defaultAndUserRules,
  evaluateLine,
  explainEvaluation,
} from '../permission-test-kit.ts';
import { analyzeShellLine, SHELL_ANALYSIS_LIMITS } from './analyze-shell-line.ts';
import { loadShellParser, type ShellParser } from './shell-parser.ts';

let real: ShellParser;

beforeAll(async () => {
  real = await loadShellParser();
});

/** The real parser, with parsing the line itself taking `ms` by the fake clock. */
function slowParser(clock: ReturnType<typeof createFakeClock>, ms: number): ShellParser {
  let first = true;
  return {
    ...real,
    parse: (source, options) => {
      if (first) clock.advance(ms);
      first = false;
      return real.parse(source, options);
    },
  };
}

describe('the time limits, measured by the injected clock', () => {
  it('parses no payload once the analysis time is over: it is scanned only for denies, and the line asks', () => {
    const clock = createFakeClock();
    const parser = slowParser(clock, SHELL_ANALYSIS_LIMITS.analysisTimeoutMs + 1);
    const analysis = analyzeShellLine(parser, "ls; bash -c 'rm -rf x'", { limits: { now: clock.now } });
    expect(analysis.problems).toEqual(['the analysis took longer than 100 ms']);
    expect(analysis.commands.map((command) => [command.text, command.via, command.onlyDeny])).toEqual([
      ['ls', [], undefined],
      ["bash -c 'rm -rf x'", [], undefined],
      ['rm -rf x', ['bash -c', 'rough scan'], true],
    ]);
  });

  it('parses no payload once the parse time is over, though the analysis time is not', () => {
    const clock = createFakeClock();
    const parser = slowParser(clock, SHELL_ANALYSIS_LIMITS.parseTimeoutMs + 1);
    const analysis = analyzeShellLine(parser, "bash -c 'rm -rf x'", { limits: { now: clock.now } });
    expect(analysis.problems).toEqual(['parsing took longer than 50 ms']);
    expect(analysis.commands.map((command) => command.via)).toEqual([[], ['bash -c', 'rough scan']]);
  });

  it('reads the whole line and every payload while the clock stands still, however long that takes', () => {
    const clock = createFakeClock();
    let line = 'ls';
    for (let level = 0; level < 8; level += 1) line = `bash -c ${JSON.stringify(line)}`;
    const analysis = analyzeShellLine(real, line, { limits: { now: clock.now } });
    expect(analysis.problems).toEqual([]);
    expect(analysis.commands.at(-1)?.text).toBe('ls');
  });

  it('gives the documented verdicts when a deadline passes: ask, and deny when the scan finds a denied command', async () => {
    const rules = defaultAndUserRules();
    const clock = createFakeClock();
    const engine = await createWarmEngine({
      parser: {
        ...real,
        parse: (source, options) => {
          // Every parse takes longer than the whole analysis may.
          clock.advance(SHELL_ANALYSIS_LIMITS.analysisTimeoutMs + 1);
          return real.parse(source, options);
        },
      },
      limits: { now: clock.now },
    });
    const asked = evaluateLine(engine, "echo go; bash -c 'ls'", { layers: { file: rules } });
    expect(asked.decision.type, explainEvaluation(asked)).toBe('ask');
    expect(asked.problems).toEqual(['the analysis took longer than 100 ms']);
    // A line not fully read is never saved as an "always" answer.
    expect(asked.alwaysPatterns).toBeNull();
    const denied = evaluateLine(engine, "echo go; bash -c 'rm -rf x'", { layers: { file: rules } });
    expect(denied.decision.type, explainEvaluation(denied)).toBe('deny');
    expect(denied.decidedBy?.forms[0]).toBe('rm -rf x');
  });
});

import { describe, expect, it } from 'vitest';
import { createTerminalStyle } from '../terminal/terminal-style.ts';
import { formatCost, formatStatusLine, formatUsage, SPINNER } from './status-line.ts';

const plain = createTerminalStyle(0);

describe('the status line', () => {
  it('shows the spinner, the elapsed time, the running tool, the usage and how to interrupt', () => {
    const line = formatStatusLine(
      {
        startedAt: 0,
        now: 72_500,
        tool: 'shell_exec',
        usage: { inputTokens: 12_345, outputTokens: 340, costUsd: 0.01234 },
        queued: 1,
      },
      plain,
    );
    expect(line).toMatch(/^. running 1m 12s · shell_exec · ↑12k ↓340 \$0\.0123 · 1 queued · esc to interrupt$/);
  });

  it('says working while no tool runs, and turns the spinner with the clock', () => {
    const first = formatStatusLine({ startedAt: 0, now: 0 }, plain);
    const next = formatStatusLine({ startedAt: 0, now: SPINNER.interval }, plain);
    expect(first).toBe(`${SPINNER.frames[0]} working 0s · esc to interrupt`);
    expect(next.startsWith(String(SPINNER.frames[1]))).toBe(true);
  });

  it('writes tokens and cost the way a person reads them', () => {
    expect(formatUsage({ inputTokens: 999, outputTokens: 1_500 })).toBe('↑999 ↓1.5k');
    expect(formatUsage({ inputTokens: 2_500_000, outputTokens: 0, costUsd: 7.5 })).toBe('↑2.5M ↓0 $7.50');
    expect(formatCost(0.0042)).toBe('$0.0042');
  });
});

import spinners from 'cli-spinners';
import type { TerminalStyle } from '../terminal/terminal-style.ts';

/** Tokens and, where a price is known, cost. */
export type Usage = { inputTokens: number; outputTokens: number; costUsd?: number | undefined };

/** What the status line tells while a turn runs. */
export type StatusInfo = {
  /** When the turn started (ms). */
  startedAt: number;
  now: number;
  /** The tool call running, if one is. */
  tool?: string | undefined;
  /** The turn's usage so far. */
  usage?: Usage | undefined;
  /** Prompts waiting behind the turn. */
  queued?: number;
};

/** The spinner's frames (cli-spinners' "dots"), and how long each shows. */
export const SPINNER = spinners.dots;

export function formatTokens(count: number): string {
  if (count < 1_000) return String(count);
  if (count < 1_000_000) return `${(count / 1_000).toFixed(count < 10_000 ? 1 : 0)}k`;
  return `${(count / 1_000_000).toFixed(1)}M`;
}

/** Dollars with the precision a small figure needs: $0.0042, $1.27. */
export function formatCost(usd: number): string {
  return usd >= 1 ? `$${usd.toFixed(2)}` : `$${usd.toFixed(4)}`;
}

/** `↑1.2k ↓340` and the cost when known. */
export function formatUsage(usage: Usage): string {
  const tokens = `↑${formatTokens(usage.inputTokens)} ↓${formatTokens(usage.outputTokens)}`;
  return usage.costUsd === undefined ? tokens : `${tokens} ${formatCost(usage.costUsd)}`;
}

function formatElapsed(ms: number): string {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  return seconds < 60 ? `${seconds}s` : `${Math.floor(seconds / 60)}m ${String(seconds % 60).padStart(2, '0')}s`;
}

/** `⠋ working 12s · shell_exec · ↑1.2k ↓340 · esc to interrupt`, the frame chosen by the clock. */
export function formatStatusLine(info: StatusInfo, style: TerminalStyle): string {
  const elapsed = info.now - info.startedAt;
  const frame = SPINNER.frames[Math.floor(elapsed / SPINNER.interval) % SPINNER.frames.length] ?? '';
  const parts = [`${style.warn(frame)} ${info.tool === undefined ? 'working' : 'running'} ${formatElapsed(elapsed)}`];
  if (info.tool !== undefined) parts.push(style.tool(info.tool));
  if (info.usage !== undefined && (info.usage.inputTokens > 0 || info.usage.outputTokens > 0)) {
    parts.push(formatUsage(info.usage));
  }
  if (info.queued !== undefined && info.queued > 0) parts.push(`${info.queued} queued`);
  parts.push(style.dim('esc to interrupt'));
  return parts.join(style.dim(' · '));
}

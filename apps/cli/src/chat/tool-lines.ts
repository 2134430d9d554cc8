import type { FileDiff } from '@molf/protocol';
import type { TerminalStyle } from '../terminal/terminal-style.ts';
import { formatDiff } from './format-diff.ts';

/** How long a tool call's description may be on its line. */
const DESCRIPTION_MAX = 300;

function cut(text: string, max: number): string {
  const one = text.replace(/\s*\n\s*/g, ' ⏎ ');
  return one.length > max ? `${one.slice(0, max - 1)}…` : one;
}

/**
 * A tool call as a person reads it: the shell line, the path, the pattern; the arguments as JSON
 * for a tool whose main argument is not known.
 */
export function describeToolCall(toolName: string, args: Record<string, unknown>): string {
  const text = (key: string) => (typeof args[key] === 'string' ? (args[key] as string) : undefined);
  switch (toolName) {
    case 'shell_exec':
      return cut(text('command') ?? JSON.stringify(args), DESCRIPTION_MAX);
    case 'read_file':
    case 'write_file':
    case 'edit_file':
      return cut(text('path') ?? JSON.stringify(args), DESCRIPTION_MAX);
    case 'glob':
    case 'grep': {
      const pattern = text('pattern') ?? '';
      const path = text('path');
      return cut(path === undefined ? pattern : `${pattern} in ${path}`, DESCRIPTION_MAX);
    }
    default:
      return cut(JSON.stringify(args), DESCRIPTION_MAX);
  }
}

type Ended = { output: string; error?: string | undefined; diff?: FileDiff | undefined };

/**
 * The lines shown under a finished tool call's first line: the diff of a file it changed, as the
 * approval showed it; else up to `outputLines` more lines of its output (or error), then how many
 * were left out.
 */
export function toolOutcomeLines(event: Ended, style: TerminalStyle, options: { outputLines: number }): string[] {
  if (event.diff !== undefined && event.error === undefined) {
    const diff = formatDiff(event.diff, style, { maxLines: 40 });
    return diff === '' ? [] : diff.split('\n');
  }
  if (options.outputLines <= 0) return [];
  const lines = (event.error ?? event.output).replace(/\n+$/, '').split('\n').slice(1);
  const shown = lines.slice(0, options.outputLines).map((line) => style.dim(cut(line, 200)));
  const hidden = lines.length - shown.length;
  if (hidden > 0) shown.push(style.dim(`… ${hidden} more line${hidden === 1 ? '' : 's'}`));
  return shown;
}

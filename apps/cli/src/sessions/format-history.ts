import type { SessionMessage } from '@molf/protocol';
import { showControlCharactersIn } from '../terminal/show-control-characters.ts';
import type { TerminalStyle } from '../terminal/terminal-style.ts';
import { toolCallOutcome } from './tool-call-outcome.ts';

export type FormatHistoryOptions = {
  /**
   * Turns an answer's text (markdown) into terminal text: the one place answers are rendered, so a
   * markdown renderer can take over. Default: the text as it is, trailing white space trimmed.
   */
  renderAnswer?: (text: string) => string;
  /** Lines of a tool's output (or error, or diff) shown before `… N more lines`. Default 4. */
  outputLines?: number;
  /** A shown line longer than this is cut with `…`. Default 200. */
  lineChars?: number;
};

type ToolMessage = Extract<SessionMessage, { role: 'tool' }>;
type ToolCall = Extract<SessionMessage, { role: 'assistant' }>['toolCalls'][number];

const DEFAULT_OUTPUT_LINES = 4;
const DEFAULT_LINE_CHARS = 200;
/** Longest argument summary on a tool call's line. */
const MAX_ARGS_CHARS = 120;
/** Where the lines under a tool call start. */
const INDENT = '    ';

function cutLine(line: string, max: number): string {
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/**
 * A tool call's arguments on its line: the one argument a person reads first (the command, the
 * path, the pattern) when there is one, else the arguments as JSON, cut.
 */
function describeArgs(args: Record<string, unknown>): string {
  for (const key of ['command', 'path', 'pattern', 'agent', 'action']) {
    const value = args[key];
    if (typeof value === 'string') return cutLine(value.replace(/\s+/g, ' '), MAX_ARGS_CHARS);
  }
  const json = JSON.stringify(args);
  return json === '{}' ? '' : cutLine(json, MAX_ARGS_CHARS);
}

/** A task's result without the `<task_result …>` line around the subagent's answer. */
function withoutTaskResultTag(output: string): string {
  return output.replace(/^<task_result\b[^>\n]*>\n/, '').replace(/\n<\/task_result>\s*$/, '');
}

/**
 * Renders a session's stored messages as `molf chat` prints them when it resumes a session and as
 * `molf sessions show` does: each prompt after `›`, each answer through `renderAnswer`, each tool
 * call on one line with its outcome (✓ done, ✗ failed, ⊘ denied, ○ cancelled) and its output, error
 * or diff collapsed to its first lines with `… N more lines`, answers cut short marked, and the
 * summaries that replaced older messages. Colour comes from `style` only (none when it has none).
 * Control characters in the messages (the model's, a tool's, a file's) are shown as `\xNN`, never
 * written to the terminal as they are.
 */
export function formatSessionHistory(
  stored: readonly SessionMessage[],
  style: TerminalStyle,
  options: FormatHistoryOptions = {},
): string {
  const messages = showControlCharactersIn(stored);
  const renderAnswer = options.renderAnswer ?? ((text: string) => text.trimEnd());
  const outputLines = options.outputLines ?? DEFAULT_OUTPUT_LINES;
  const lineChars = options.lineChars ?? DEFAULT_LINE_CHARS;
  const blocks: Array<{ tool: boolean; text: string }> = [];
  /** Calls of the answers so far, by id, until their results come. */
  const calls = new Map<string, ToolCall>();

  /** `text`'s first lines, indented and dimmed, then how many more there are. */
  const collapsed = (text: string, paint: (line: string) => string = style.dim): string[] => {
    const lines = text.replace(/\s+$/, '').split('\n');
    if (lines.length === 1 && lines[0] === '') return [];
    const shown = lines.slice(0, outputLines).map((line) => `${INDENT}${paint(cutLine(line, lineChars))}`);
    const more = lines.length - outputLines;
    return more > 0 ? [...shown, `${INDENT}${style.dim(`… ${more} more line${more === 1 ? '' : 's'}`)}`] : shown;
  };

  /** A unified diff's lines painted as added, removed and hunk headers. */
  const paintDiffLine = (line: string): string => {
    if (line.startsWith('+++') || line.startsWith('---')) return style.dim(line);
    if (line.startsWith('+')) return style.added(line);
    if (line.startsWith('-')) return style.removed(line);
    if (line.startsWith('@@')) return style.hunk(line);
    return line;
  };

  const toolBlock = (call: { toolName: string; args: Record<string, unknown> }, result: ToolMessage | undefined) => {
    const args = describeArgs(call.args);
    const head = `${style.tool(call.toolName)}${args === '' ? '' : ` ${args}`}`;
    if (result === undefined) return [`${style.dim('○')} ${head} ${style.dim('(no result)')}`];
    const outcome = toolCallOutcome(result);
    const mark =
      outcome === 'ok'
        ? style.ok('✓')
        : outcome === 'denied'
          ? style.fail('⊘')
          : outcome === 'cancelled'
            ? style.dim('○')
            : style.fail('✗');
    const lines = [`${mark} ${head}${outcome === 'denied' ? ` ${style.fail('(denied)')}` : ''}`];
    if (result.error !== undefined) lines.push(...collapsed(result.error, style.fail));
    const output = result.toolName === 'task' ? withoutTaskResultTag(result.output) : result.output;
    if (result.diff !== undefined && result.diff.diff !== '') lines.push(...collapsed(result.diff.diff, paintDiffLine));
    else if (result.error === undefined || output.trim() !== '') lines.push(...collapsed(output));
    if (result.diff?.note !== undefined) lines.push(`${INDENT}${style.dim(result.diff.note)}`);
    if (result.truncated === true) lines.push(`${INDENT}${style.dim('(the tool cut its output; the whole is kept)')}`);
    return lines;
  };

  /** Calls whose results never came (their turn was cut short), printed where their turn ends. */
  const flushCalls = () => {
    for (const call of calls.values()) blocks.push({ tool: true, text: toolBlock(call, undefined).join('\n') });
    calls.clear();
  };

  for (const message of messages) {
    switch (message.role) {
      case 'user': {
        flushCalls();
        const [first = '', ...rest] = message.text.replace(/\s+$/, '').split('\n');
        const cron = message.cronJobId === undefined ? '' : style.dim('(cron) ');
        blocks.push({
          tool: false,
          text: [`${style.user('›')} ${cron}${style.user(first)}`, ...rest.map((line) => `  ${line}`)].join('\n'),
        });
        break;
      }
      case 'assistant': {
        const text = renderAnswer(message.text);
        const lines: string[] = [];
        if (text !== '') lines.push(text);
        if (message.interrupted === true) lines.push(style.fail('(answer cut short)'));
        if (lines.length > 0) blocks.push({ tool: false, text: lines.join('\n') });
        for (const call of message.toolCalls) calls.set(call.toolCallId, call);
        break;
      }
      case 'tool': {
        const call = calls.get(message.toolCallId);
        calls.delete(message.toolCallId);
        // A result whose call is on an earlier page: its name is all there is.
        blocks.push({
          tool: true,
          text: toolBlock(call ?? { toolName: message.toolName, args: {} }, message).join('\n'),
        });
        break;
      }
      case 'summary':
        blocks.push({
          tool: false,
          text: [style.dim('— earlier messages summarised —'), ...collapsed(message.text)].join('\n'),
        });
        break;
      default:
        message satisfies never;
    }
  }
  flushCalls();
  // A blank line between blocks; a turn's tool calls stand together.
  const text = blocks
    .map((block, index) => (index > 0 && !(block.tool && blocks[index - 1]?.tool) ? `\n${block.text}` : block.text))
    .join('\n');
  return text === '' ? '' : `${text}\n`;
}

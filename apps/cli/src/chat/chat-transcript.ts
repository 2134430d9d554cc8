import type { SessionEvent } from '@molf/protocol';
import { createTerminalStyle, type TerminalStyle } from '../terminal/terminal-style.ts';
import { createMarkdownStream, type MarkdownStream } from './markdown-stream.ts';
import type { MarkdownRenderer } from './render-markdown.ts';
import { describeToolCall, toolOutcomeLines } from './tool-lines.ts';

/** What `molf chat` prints of a session's events: answers, tool calls, and its subagents' work under their task. */
export type ChatTranscript = {
  /** Prints what an event shows. Approvals and the busy state are the chat's own to show. */
  show(event: SessionEvent): void;
  /** Ends an unfinished line, so that what the chat prints next starts a line of its own. */
  endLine(): void;
  /** Forgets the subagents at work (the chat shows another session). */
  reset(): void;
  /** The answer's block still being written (with markdown: not printed yet, for the live region). */
  pendingText(): string;
};

export type TranscriptOptions = {
  /** Colours; default none. */
  style?: TerminalStyle;
  /**
   * Render the answer as markdown, block by block as each is complete; every write is then whole
   * lines, the unfinished block waiting in `pendingText()`. Without, text streams as it comes.
   */
  markdown?: MarkdownRenderer;
  /** Lines of a tool's output shown under its call (the rest is counted). Default 0: the first line only. */
  outputLines?: number;
};

type OwnEvent = Extract<SessionEvent, { type: 'subagent.event' }>['event'];

/** A subagent at work: the parent's `task` call that runs it. */
type Child = {
  agent: string;
  /** Its wrapped events have been tied to this task call. */
  bound: boolean;
  /** The agent's name, numbered when two children of one agent run at once (`general#2`). */
  label: string;
  /** Streamed text not yet printed: only whole lines are, while other children stream too. */
  pending: string;
};

/** Beginning of a subagent's lines: they stand indented under the task call that runs it. */
const CHILD_INDENT = '  │ ';

/** The first line of a tool's output or error, cut for one terminal line. */
function firstLine(text: string, max: number): string {
  return text.split('\n')[0]?.slice(0, max) ?? '';
}

function endedLine(event: Extract<OwnEvent, { type: 'tool-call.ended' }>, style: TerminalStyle): string {
  const mark = event.error === undefined ? style.ok('✓') : style.fail('✗');
  return `${mark} ${event.toolName}: ${firstLine(event.error ?? event.output, 200)}${event.truncated ? style.dim(' (truncated)') : ''}`;
}

/** A task's result without the `<task_result …>` line around the subagent's answer. */
function withoutTaskResultTag(output: string): string {
  return output.replace(/^<task_result\b[^>\n]*>\n/, '');
}

/**
 * Turns a session's events into terminal text. A subagent's tool calls, text and errors are shown
 * indented under its `task` call, from the call's start to its end. While several subagents run at
 * once, each line names its agent and their text is printed by whole lines, so that two streams
 * never mix inside one line; a lone subagent's text streams as it comes.
 */
export function createChatTranscript(write: (text: string) => void, options: TranscriptOptions = {}): ChatTranscript {
  const style = options.style ?? createTerminalStyle(0);
  const render = options.markdown;
  /** The answer being written, when it is rendered as markdown. */
  let answer: MarkdownStream | undefined;
  /** Prints the answer's blocks that are complete; with `end`, the rest too. */
  const printAnswer = (blocks: string[]) => {
    if (render === undefined) return;
    for (const block of blocks) {
      endLine();
      write(`${render(block)}\n\n`);
    }
  };
  const finishAnswer = () => {
    if (answer === undefined) return;
    const rest = answer.finish();
    answer = undefined;
    printAnswer(rest === '' ? [] : [rest]);
  };
  /** A tool call's end, with its output's first lines and the diff of a file it changed. */
  const ended = (event: Extract<OwnEvent, { type: 'tool-call.ended' }>, prefix = '') => {
    line(`${prefix}${endedLine(event, style)}`);
    for (const extra of toolOutcomeLines(event, style, { outputLines: options.outputLines ?? 0 })) {
      line(`${prefix}  ${extra}`);
    }
  };
  /** Who wrote the unfinished last line on the screen: `parent`, or a task call's id. */
  let openLine: string | undefined;
  /** The subagents at work, by their parent's `task` call id, in the order they started. */
  const children = new Map<string, Child>();
  /**
   * The task call id a `subagent.event` names, when it differs from the call's id in the parent's
   * `tool-call.started` (the server names the call by its own id there): each is tied to the oldest
   * task call of that agent not tied yet.
   */
  const taskOfChild = new Map<string, string>();

  const endLine = () => {
    if (openLine !== undefined) write('\n');
    openLine = undefined;
  };
  const line = (text: string) => {
    endLine();
    write(`${text}\n`);
  };
  /** Streamed text of one writer: a line another writer left unfinished is ended first. */
  const stream = (owner: string, prefix: string, text: string) => {
    for (const piece of text.split(/(?<=\n)/)) {
      if (piece === '') continue;
      if (openLine !== owner) {
        endLine();
        write(prefix);
      }
      write(piece);
      openLine = piece.endsWith('\n') ? undefined : owner;
    }
  };

  const prefixOf = (child: Child) => (children.size > 1 ? `${CHILD_INDENT}${child.label}: ` : CHILD_INDENT);
  const childLine = (child: Child, text: string) => line(`${prefixOf(child)}${text}`);
  /** Prints a child's text still held back and ends its line. */
  const flush = (id: string, child: Child) => {
    if (child.pending !== '') childLine(child, child.pending);
    child.pending = '';
    if (openLine === id) endLine();
  };

  const start = (id: string, agent: string, options: { bound: boolean }): Child => {
    const labels = new Set([...children.values()].map((child) => child.label));
    let label = agent;
    for (let number = 2; labels.has(label); number++) label = `${agent}#${number}`;
    const child: Child = { agent, label, bound: options.bound, pending: '' };
    children.set(id, child);
    return child;
  };

  /** The task call that runs the child whose wrapped events name `childTask`. */
  const taskOf = (childTask: string, agent: string): string => {
    const tied = taskOfChild.get(childTask);
    if (tied !== undefined) return tied;
    const same = children.get(childTask);
    if (same !== undefined) {
      same.bound = true;
      return childTask;
    }
    const [id, oldest] = [...children].find(([, child]) => !child.bound && child.agent === agent) ?? [];
    if (id === undefined || oldest === undefined) {
      // A chat that joined while the task ran saw no start of it.
      start(childTask, agent, { bound: true });
      return childTask;
    }
    oldest.bound = true;
    taskOfChild.set(childTask, id);
    return id;
  };

  const forget = (id: string) => {
    children.delete(id);
    for (const [childTask, task] of taskOfChild) if (task === id) taskOfChild.delete(childTask);
  };

  const showChild = (childTask: string, agent: string, event: OwnEvent) => {
    const id = taskOf(childTask, agent);
    const child = children.get(id) ?? start(id, agent, { bound: true });
    switch (event.type) {
      case 'message.delta':
        if (children.size === 1 && render === undefined) {
          stream(id, prefixOf(child), child.pending + event.text);
          child.pending = '';
        } else {
          const lines = (child.pending + event.text).split('\n');
          child.pending = lines.pop() ?? '';
          for (const text of lines) childLine(child, text);
        }
        break;
      case 'message.completed':
        flush(id, child);
        break;
      case 'tool-call.started':
        flush(id, child);
        childLine(child, `${style.tool(`⚙ ${event.toolName}`)} ${describeToolCall(event.toolName, event.args)}`);
        break;
      case 'tool-call.ended':
        flush(id, child);
        ended(event, prefixOf(child));
        break;
      case 'error':
        flush(id, child);
        childLine(child, style.fail(`! ${event.message}`));
        break;
      case 'turn.ended':
        flush(id, child);
        if (event.reason !== 'completed') childLine(child, `(${child.agent} ended: ${event.reason})`);
        break;
      default:
        break;
    }
  };

  return {
    show(event) {
      switch (event.type) {
        case 'message.delta':
          if (render === undefined) {
            stream('parent', '', event.text);
          } else {
            answer ??= createMarkdownStream();
            printAnswer(answer.push(event.text));
          }
          break;
        case 'message.completed':
          finishAnswer();
          break;
        case 'tool-call.started':
          finishAnswer();
          if (event.toolName === 'task') {
            const agent = String(event.args.agent ?? '?');
            start(event.toolCallId, agent, { bound: false });
            line(`${style.tool('⚙ task')} ${agent}: ${String(event.args.description ?? '').slice(0, 200)}`);
          } else {
            line(`${style.tool(`⚙ ${event.toolName}`)} ${describeToolCall(event.toolName, event.args)}`);
          }
          break;
        case 'tool-call.ended': {
          const child = children.get(event.toolCallId);
          if (child === undefined) {
            ended(event);
            break;
          }
          flush(event.toolCallId, child);
          forget(event.toolCallId);
          line(
            endedLine({ ...event, toolName: `task ${child.agent}`, output: withoutTaskResultTag(event.output) }, style),
          );
          break;
        }
        case 'subagent.event':
          showChild(event.toolCallId, event.agent, event.event);
          break;
        case 'message.queued':
          line(style.dim(`(queued, position ${event.position})`));
          break;
        case 'error':
          finishAnswer();
          line(style.fail(`! ${event.message}`));
          break;
        case 'turn.ended':
          finishAnswer();
          // A task cut short by the turn's end (an abort) reports no end of its own.
          for (const [id, child] of children) flush(id, child);
          children.clear();
          taskOfChild.clear();
          if (event.reason !== 'completed') line(style.warn(`(turn ended: ${event.reason})`));
          break;
        case 'session.resync':
          finishAnswer();
          line(style.warn('(reconnected: some events were missed; /session to reload)'));
          break;
        default:
          break;
      }
    },
    endLine,
    reset() {
      endLine();
      answer = undefined;
      children.clear();
      taskOfChild.clear();
    },
    pendingText: () => answer?.pending() ?? '',
  };
}

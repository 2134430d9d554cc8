import type { SessionEvent } from '@molf/protocol';
import { describe, expect, it } from 'vitest';
import { createTerminalStyle } from '../terminal/terminal-style.ts';
import { createChatTranscript } from './chat-transcript.ts';
import { createMarkdownRenderer } from './render-markdown.ts';

const event = (body: Record<string, unknown>) => ({ ...body, seq: 1, sessionId: 'parent', at: 't' }) as SessionEvent;

/** An event of the child run by the parent's task call `toolCallId`, wrapped as the parent's stream has it. */
const child = (toolCallId: string, agent: string, body: Record<string, unknown>) =>
  event({
    type: 'subagent.event',
    toolCallId,
    agent,
    childSessionId: `child-${toolCallId}`,
    event: { turnId: 'ct', ...body, seq: 1, sessionId: `child-${toolCallId}`, at: 't' },
  });
const taskStarted = (toolCallId: string, agent: string, description: string) =>
  event({
    type: 'tool-call.started',
    turnId: 't',
    toolCallId,
    toolName: 'task',
    args: { agent, description, prompt: 'p' },
  });
const taskEnded = (toolCallId: string, output: string) =>
  event({ type: 'tool-call.ended', turnId: 't', toolCallId, toolName: 'task', output, truncated: false });
const delta = (text: string) => ({ type: 'message.delta', text });

/** The text the transcript prints for these events. */
function printed(events: SessionEvent[]): string {
  let text = '';
  const transcript = createChatTranscript((chunk) => {
    text += chunk;
  });
  for (const one of events) transcript.show(one);
  transcript.endLine();
  return text;
}

describe("molf chat's transcript", () => {
  it("shows a subagent's tool calls and streamed text indented under its task call, then the task's end", () => {
    expect(
      printed([
        event({ type: 'message.delta', turnId: 't', text: 'Let me ask an explorer.' }),
        taskStarted('call_t', 'explore', 'find the loader'),
        child('call_t', 'explore', { type: 'turn.started', messageId: 'm', model: 'fake/m' }),
        child('call_t', 'explore', {
          type: 'tool-call.started',
          toolCallId: 'c1',
          toolName: 'read_file',
          args: { path: 'src/load.ts' },
        }),
        child('call_t', 'explore', {
          type: 'tool-call.ended',
          toolCallId: 'c1',
          toolName: 'read_file',
          output: 'export function load() {}\nmore',
          truncated: false,
        }),
        child('call_t', 'explore', delta('The loader ')),
        child('call_t', 'explore', delta('is in src.\nIt reads ')),
        child('call_t', 'explore', delta('JSON.')),
        child('call_t', 'explore', { type: 'message.completed', message: {} }),
        child('call_t', 'explore', { type: 'turn.ended', reason: 'completed' }),
        taskEnded(
          'call_t',
          '<task_result agent="explore" session="c1">\nThe loader is in src.\nIt reads JSON.\n</task_result>',
        ),
        event({ type: 'message.delta', turnId: 't', text: 'Found it.' }),
      ]),
    ).toBe(
      [
        'Let me ask an explorer.',
        '⚙ task explore: find the loader',
        '  │ ⚙ read_file src/load.ts',
        '  │ ✓ read_file: export function load() {}',
        '  │ The loader is in src.',
        '  │ It reads JSON.',
        '✓ task explore: The loader is in src.',
        'Found it.',
        '',
      ].join('\n'),
    );
  });

  it('names the agent on each line while two subagents run, and prints their text by whole lines, never mixed', () => {
    expect(
      printed([
        taskStarted('call_a', 'general', 'job a'),
        taskStarted('call_b', 'general', 'job b'),
        child('call_a', 'general', delta('first half ')),
        child('call_b', 'general', delta('other ')),
        child('call_a', 'general', delta('of A\nsecond')),
        child('call_b', 'general', delta('line B\n')),
        child('call_b', 'general', {
          type: 'tool-call.started',
          toolCallId: 'c1',
          toolName: 'shell_exec',
          args: { command: 'make' },
        }),
        child('call_a', 'general', delta(' line A')),
        child('call_a', 'general', { type: 'message.completed', message: {} }),
        taskEnded('call_a', 'A done'),
        // Alone again: the other's text streams, and its lines no longer need a name.
        child('call_b', 'general', delta('B goes ')),
        child('call_b', 'general', delta('on')),
        taskEnded('call_b', 'B done'),
      ]),
    ).toBe(
      [
        '⚙ task general: job a',
        '⚙ task general: job b',
        '  │ general: first half of A',
        '  │ general#2: other line B',
        '  │ general#2: ⚙ shell_exec make',
        '  │ general: second line A',
        '✓ task general: A done',
        '  │ B goes on',
        '✓ task general: B done',
        '',
      ].join('\n'),
    );
  });

  it("shows a subagent's failed call, its error and an end other than completed, and a failed task", () => {
    expect(
      printed([
        taskStarted('call_t', 'general', 'slow job'),
        child('call_t', 'general', {
          type: 'tool-call.ended',
          toolCallId: 'c1',
          toolName: 'shell_exec',
          output: '',
          error: 'Permission denied: no',
          truncated: false,
        }),
        child('call_t', 'general', { type: 'error', code: 'timeout', message: 'the model stalled' }),
        child('call_t', 'general', { type: 'turn.ended', reason: 'aborted' }),
        event({
          type: 'tool-call.ended',
          turnId: 't',
          toolCallId: 'call_t',
          toolName: 'task',
          output: '',
          error: 'The general subagent did not finish within 3 s',
          truncated: false,
        }),
      ]),
    ).toBe(
      [
        '⚙ task general: slow job',
        '  │ ✗ shell_exec: Permission denied: no',
        '  │ ! the model stalled',
        '  │ (general ended: aborted)',
        '✗ task general: The general subagent did not finish within 3 s',
        '',
      ].join('\n'),
    );
  });

  it("indents a subagent's lines when the chat joined after its task started", () => {
    expect(printed([child('call_t', 'explore', delta('still looking\n'))])).toBe('  │ still looking\n');
  });

  it("forgets the parent turn's subagents when the turn ends without their task's end (an abort)", () => {
    expect(
      printed([
        taskStarted('call_a', 'general', 'job a'),
        event({ type: 'turn.ended', turnId: 't', reason: 'aborted' }),
        taskStarted('call_b', 'explore', 'job b'),
        child('call_b', 'explore', delta('alone\n')),
      ]),
    ).toBe(['⚙ task general: job a', '(turn ended: aborted)', '⚙ task explore: job b', '  │ alone', ''].join('\n'));
  });

  it("ties a subagent's events to the oldest task call of its agent when they name the call by another id", () => {
    expect(
      printed([
        taskStarted('call_a', 'explore', 'job a'),
        taskStarted('call_b', 'general', 'job b'),
        taskStarted('call_c', 'general', 'job c'),
        child('tc_1', 'general', delta('from the first general\n')),
        child('tc_2', 'general', delta('from the second general\n')),
        child('tc_1', 'general', delta('first again\n')),
        taskEnded('call_b', 'b done'),
        taskEnded('call_a', 'a done'),
        child('tc_2', 'general', delta('second, alone now\n')),
      ]),
    ).toBe(
      [
        '⚙ task explore: job a',
        '⚙ task general: job b',
        '⚙ task general: job c',
        '  │ general: from the first general',
        '  │ general#2: from the second general',
        '  │ general: first again',
        '✓ task general: b done',
        '✓ task explore: a done',
        '  │ second, alone now',
        '',
      ].join('\n'),
    );
  });
});

describe("molf chat's transcript on a terminal", () => {
  const plain = createTerminalStyle(0);
  const turn = (body: Record<string, unknown>) => event({ turnId: 't', ...body });

  it('prints the answer as markdown block by block, holding the block still being written', () => {
    const writes: string[] = [];
    const transcript = createChatTranscript((text) => writes.push(text), {
      style: plain,
      markdown: createMarkdownRenderer(plain, 80),
    });
    transcript.show(turn({ type: 'message.delta', text: 'Some **bold** words.\n\n- one\n' }));
    expect(writes.join('')).toBe('Some bold words.\n\n');
    expect(transcript.pendingText()).toBe('- one\n');
    transcript.show(turn({ type: 'message.delta', text: '- two' }));
    transcript.show(turn({ type: 'tool-call.started', toolCallId: 'c', toolName: 'glob', args: { pattern: '*.md' } }));
    expect(transcript.pendingText()).toBe('');
    expect(writes.join('')).toMatch(/Some bold words\.\n\n\s*\* one\n\s*\* two\n\n⚙ glob \*\.md\n$/);
    // Every write is whole lines: the live region below them is redrawn after each.
    expect(writes.every((text) => text.endsWith('\n'))).toBe(true);
  });

  it("shows the first lines of a tool's output under its call and counts the rest", () => {
    const writes: string[] = [];
    const transcript = createChatTranscript((text) => writes.push(text), { style: plain, outputLines: 2 });
    transcript.show(
      turn({
        type: 'tool-call.ended',
        toolCallId: 'c',
        toolName: 'shell_exec',
        output: 'one\ntwo\nthree\nfour\nfive\n',
        truncated: false,
      }),
    );
    expect(writes.join('')).toBe('✓ shell_exec: one\n  two\n  three\n  … 2 more lines\n');
  });

  it('shows the diff of a file a call changed under its line', () => {
    const writes: string[] = [];
    const transcript = createChatTranscript((text) => writes.push(text), { style: plain });
    transcript.show(
      turn({
        type: 'tool-call.ended',
        toolCallId: 'c',
        toolName: 'edit_file',
        output: 'Edited notes.txt',
        truncated: false,
        diff: { diff: '--- a/notes.txt\n+++ b/notes.txt\n@@ -1 +1 @@\n-beta\n+BETA\n', truncated: false },
      }),
    );
    expect(writes.join('')).toBe(
      '✓ edit_file: Edited notes.txt\n  --- a/notes.txt\n  +++ b/notes.txt\n  @@ -1 +1 @@\n  -beta\n  +BETA\n',
    );
  });
});

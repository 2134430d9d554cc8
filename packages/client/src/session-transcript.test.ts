import type { SessionEvent, SessionEventBody, SessionMessage } from '@molf/protocol';
import { describe, expect, it } from 'vitest';
import {
  applyTranscriptEvent,
  createTranscript,
  type SessionTranscript,
  transcriptFromMessages,
  withStoredMessages,
} from './session-transcript.ts';

const AT = '2026-11-24T10:00:00.000Z';
let seq = 0;
const event = (body: SessionEventBody): SessionEvent =>
  ({ ...body, seq: ++seq, sessionId: 's', at: AT }) as SessionEvent;

const user: SessionMessage = { id: 'u1', at: AT, role: 'user', text: 'list the files' };
const asking: SessionMessage = {
  id: 'a1',
  at: AT,
  role: 'assistant',
  text: 'Looking.',
  model: 'f/m',
  toolCalls: [{ toolCallId: 'c1', toolName: 'glob', args: { pattern: '*' } }],
};
const result: SessionMessage = {
  id: 'r1',
  at: AT,
  role: 'tool',
  toolCallId: 'c1',
  toolName: 'glob',
  output: 'a.txt',
};
const answer: SessionMessage = { id: 'a2', at: AT, role: 'assistant', text: 'One file.', model: 'f/m', toolCalls: [] };

/** The events of one turn that asks the files, then answers. */
const turnEvents = (): SessionEvent[] => [
  event({ type: 'turn.started', turnId: 't1', messageId: 'u1', prompt: 'list the files', model: 'f/m' }),
  event({ type: 'message.delta', turnId: 't1', text: 'Look' }),
  event({ type: 'message.delta', turnId: 't1', text: 'ing.' }),
  event({ type: 'message.completed', turnId: 't1', message: asking }),
  event({ type: 'tool-call.started', turnId: 't1', toolCallId: 'c1', toolName: 'glob', args: { pattern: '*' } }),
  event({
    type: 'tool-call.ended',
    turnId: 't1',
    toolCallId: 'c1',
    toolName: 'glob',
    output: 'a.txt',
    truncated: false,
  }),
  event({ type: 'message.delta', turnId: 't1', text: 'One ' }),
  event({ type: 'message.delta', turnId: 't1', text: 'file.' }),
  event({ type: 'message.completed', turnId: 't1', message: answer }),
  event({ type: 'turn.ended', turnId: 't1', reason: 'completed' }),
];

const apply = (transcript: SessionTranscript, events: SessionEvent[]) =>
  events.reduce(applyTranscriptEvent, transcript);
const summary = (transcript: SessionTranscript) =>
  transcript.items.map((item) =>
    item.kind === 'tool' ? `tool ${item.toolName} ${item.status} ${item.output ?? ''}` : `${item.kind} ${item.text}`,
  );

describe('a session transcript', () => {
  it('shows a live turn as it streams: the prompt, the text growing, the call and its result, the answer', () => {
    const events = turnEvents();
    const streaming = apply(createTranscript(), events.slice(0, 3));
    expect(summary(streaming)).toEqual(['user list the files', 'assistant Looking.']);
    expect(streaming.items[1]).toMatchObject({ streaming: true });
    expect(streaming.turn?.turnId).toBe('t1');

    const done = apply(streaming, events.slice(3));
    expect(summary(done)).toEqual([
      'user list the files',
      'assistant Looking.',
      'tool glob done a.txt',
      'assistant One file.',
    ]);
    expect(done.items.every((item) => item.kind !== 'assistant' || !item.streaming)).toBe(true);
    expect(done.turn).toBeUndefined();
  });

  it('shows the stored messages and the same turn replayed after a reload once each', () => {
    const events = turnEvents();
    // The page reloaded after the answer's first delta: the history has the first step, the events replay the turn.
    const loaded = transcriptFromMessages([user, asking, result]);
    const replayed = apply(loaded, events.slice(0, 7));
    expect(summary(replayed)).toEqual([
      'user list the files',
      'assistant Looking.',
      'tool glob done a.txt',
      'assistant One ',
    ]);
    expect(summary(apply(replayed, events.slice(7)))).toEqual([
      'user list the files',
      'assistant Looking.',
      'tool glob done a.txt',
      'assistant One file.',
    ]);
  });

  it('keeps what events added when the stored messages load after them', () => {
    const events = turnEvents();
    const live = apply(createTranscript(), events.slice(0, 7));
    const merged = withStoredMessages(live, [user, asking, result]);
    expect(summary(merged)).toEqual([
      'user list the files',
      'assistant Looking.',
      'tool glob done a.txt',
      'assistant One ',
    ]);
  });

  it('puts an older page of the history before what is shown, and a page read again in its place', () => {
    const older: SessionMessage[] = [
      { id: 'u0', at: AT, role: 'user', text: 'hello' },
      { id: 'a0', at: AT, role: 'assistant', text: 'Hi.', model: 'f/m', toolCalls: [] },
    ];
    const live = apply(transcriptFromMessages([user, asking, result]), turnEvents().slice(6, 7));
    const withOlder = withStoredMessages(live, older);
    const expected = [
      'user hello',
      'assistant Hi.',
      'user list the files',
      'assistant Looking.',
      'tool glob done a.txt',
    ];
    expect(summary(withOlder)).toEqual([...expected, 'assistant One ']);
    // The last page read again (after a resync), now from the call on: older items stay first, nothing twice.
    const reread = withStoredMessages(withOlder, [asking, { ...result, output: 'a.txt b.txt' }]);
    expect(summary(reread)).toEqual([...expected.slice(0, 4), 'tool glob done a.txt b.txt', 'assistant One ']);
  });

  it('gives streamed text one stream id from its first delta to its completed message, and text after a call another', () => {
    const events = turnEvents();
    const streamIds = (transcript: SessionTranscript) =>
      transcript.items.flatMap((item) => (item.kind === 'assistant' ? [`${item.key} ${item.streamId}`] : []));
    const firstDelta = events[1]?.seq;
    const streaming = apply(createTranscript(), events.slice(0, 3));
    expect(streamIds(streaming)).toEqual([`stream:t1 stream:t1@${firstDelta}`]);
    const done = apply(streaming, events.slice(3));
    const secondDelta = events[6]?.seq;
    expect(streamIds(done)).toEqual([`a1 stream:t1@${firstDelta}`, `a2 stream:t1@${secondDelta}`]);
    // Stored messages never streamed here: they have none.
    expect(streamIds(transcriptFromMessages([user, asking]))).toEqual(['a1 undefined']);
  });

  it('marks an aborted turn: its text interrupted, its running calls cancelled, and a note', () => {
    const calling: SessionMessage = {
      ...asking,
      id: 'a3',
      text: '',
      toolCalls: [{ toolCallId: 'c2', toolName: 'shell_exec', args: { command: 'sleep 100' } }],
    };
    const inCall = apply(createTranscript(), [
      event({ type: 'turn.started', turnId: 't2', messageId: 'u2', prompt: 'sleep', model: 'f/m' }),
      event({ type: 'message.completed', turnId: 't2', message: calling }),
      event({ type: 'tool-call.started', turnId: 't2', toolCallId: 'c2', toolName: 'shell_exec', args: {} }),
      event({ type: 'turn.ended', turnId: 't2', reason: 'aborted' }),
    ]);
    expect(summary(inCall)).toEqual(['user sleep', 'tool shell_exec cancelled ', 'notice Stopped.']);

    const inText = apply(createTranscript(), [
      event({ type: 'turn.started', turnId: 't3', messageId: 'u3', prompt: 'talk', model: 'f/m' }),
      event({ type: 'message.delta', turnId: 't3', text: 'Once upon' }),
      event({ type: 'turn.ended', turnId: 't3', reason: 'aborted' }),
    ]);
    expect(summary(inText)).toEqual(['user talk', 'assistant Once upon', 'notice Stopped.']);
    expect(inText.items[1]).toMatchObject({ streaming: false, interrupted: true });
  });

  it('stops the text of a turn cut off without its end when the prompt’s turn starts again, and streams the new one apart', () => {
    const transcript = apply(createTranscript(), [
      event({ type: 'turn.started', turnId: 't4', messageId: 'u4', prompt: 'count', model: 'f/m' }),
      event({ type: 'message.delta', turnId: 't4', text: 'one two' }),
      event({ type: 'error', turnId: 't4', code: 'database_unavailable', message: 'the database cannot be reached' }),
      event({ type: 'turn.started', turnId: 't5', messageId: 'u4', prompt: 'count', model: 'f/m' }),
      event({ type: 'message.delta', turnId: 't5', text: 'one two three' }),
    ]);
    expect(summary(transcript)).toEqual([
      'user count',
      'assistant one two',
      'notice the database cannot be reached',
      'assistant one two three',
    ]);
    expect(transcript.items[1]).toMatchObject({ streaming: false, interrupted: true });
    expect(transcript.items[3]).toMatchObject({ streaming: true });
    expect(transcript.turn?.turnId).toBe('t5');
  });

  it('nests a subagent’s work under its task call', () => {
    const child = (body: SessionEventBody) => ({ ...body, seq: 1, sessionId: 'child', at: AT }) as never;
    const nested = apply(createTranscript(), [
      event({
        type: 'tool-call.started',
        turnId: 't3',
        toolCallId: 'task1',
        toolName: 'task',
        args: { agent: 'explore' },
      }),
      event({
        type: 'subagent.event',
        toolCallId: 'task1',
        agent: 'explore',
        childSessionId: 'child',
        event: child({ type: 'tool-call.started', turnId: 'ct', toolCallId: 'cc', toolName: 'grep', args: {} }),
      }),
      event({
        type: 'subagent.event',
        toolCallId: 'task1',
        agent: 'explore',
        childSessionId: 'child',
        event: child({ type: 'message.delta', turnId: 'ct', text: 'found it' }),
      }),
    ]);
    expect(nested.items).toHaveLength(1);
    const task = nested.items[0];
    expect(task?.kind === 'tool' && task.subagent).toMatchObject({ agent: 'explore', childSessionId: 'child' });
    expect(task?.kind === 'tool' && summary({ ...nested, items: task.subagent?.items ?? [] })).toEqual([
      'tool grep running ',
      'assistant found it',
    ]);
  });

  it('counts prompts queued behind the running turn until their turns start', () => {
    const queued = apply(createTranscript(), [
      event({ type: 'turn.started', turnId: 't4', messageId: 'u4', prompt: 'one', model: 'f/m' }),
      event({ type: 'message.queued', messageId: 'u5', position: 1 }),
      event({ type: 'message.queued', messageId: 'u6', position: 2 }),
    ]);
    expect(queued.queued).toBe(2);
    const next = apply(queued, [
      event({ type: 'turn.ended', turnId: 't4', reason: 'completed' }),
      event({ type: 'turn.started', turnId: 't5', messageId: 'u5', prompt: 'two', model: 'f/m' }),
    ]);
    expect(next.queued).toBe(1);
  });

  it('marks a prompt a cron run sent with its job, from the history and from a live turn, and a person’s not', () => {
    const stored = transcriptFromMessages([{ ...user, cronJobId: 'cj_0123abcd' }, answer]);
    expect(stored.items[0]).toMatchObject({ kind: 'user', cronJobId: 'cj_0123abcd' });
    const live = apply(createTranscript(), [
      event({
        type: 'turn.started',
        turnId: 't7',
        messageId: 'u7',
        prompt: 'check the deploy',
        cronJobId: 'cj_0123abcd',
        model: 'f/m',
      }),
      event({ type: 'turn.ended', turnId: 't7', reason: 'completed' }),
      event({ type: 'turn.started', turnId: 't8', messageId: 'u8', prompt: 'thanks', model: 'f/m' }),
    ]);
    expect(live.items[0]).toMatchObject({ kind: 'user', text: 'check the deploy', cronJobId: 'cj_0123abcd' });
    expect(live.items[1]).toMatchObject({ kind: 'user', text: 'thanks' });
    expect(live.items[1]).not.toHaveProperty('cronJobId');
    // Its stored message, read after the live turn, keeps the mark.
    const reloaded = withStoredMessages(live, [
      { id: 'u7', at: AT, role: 'user', text: 'check the deploy', cronJobId: 'cj_0123abcd' },
    ]);
    expect(reloaded.items.find((item) => item.key === 'u7')).toMatchObject({ cronJobId: 'cj_0123abcd' });
  });

  it('leaves the transcript given unchanged', () => {
    const before = transcriptFromMessages([user]);
    const items = before.items;
    applyTranscriptEvent(before, event({ type: 'message.delta', turnId: 't6', text: 'x' }));
    expect(before.items).toBe(items);
    expect(before.items).toHaveLength(1);
  });

  it('keeps where a cut output is whole and the attachments of a result, from the history and from events', () => {
    const fullOutput = { path: '.molf/tool-output/tc_1.txt', bytes: 5_000_000 };
    const attachment = { sha256: 'a'.repeat(64), mimeType: 'image/png', size: 10 };
    const stored = transcriptFromMessages([
      asking,
      { ...result, truncated: true, fullOutput, attachments: [attachment] },
    ]);
    expect(stored.items[1]).toMatchObject({ fullOutput, attachments: [attachment], truncated: true });
    const live = apply(transcriptFromMessages([asking]), [
      event({
        type: 'tool-call.ended',
        turnId: 't1',
        toolCallId: 'c1',
        toolName: 'glob',
        output: 'a.txt',
        truncated: true,
        fullOutput,
        attachments: [attachment],
      }),
    ]);
    expect(live.items[1]).toMatchObject({ fullOutput, attachments: [attachment] });
  });

  it('keeps the diff of an edit, from the history and from the event', () => {
    const diff = { diff: '--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+b\n', truncated: false };
    const stored = transcriptFromMessages([asking, { ...result, toolName: 'edit_file', diff }]);
    expect(stored.items[1]).toMatchObject({ diff });
    const live = apply(transcriptFromMessages([asking]), [
      event({
        type: 'tool-call.ended',
        turnId: 't1',
        toolCallId: 'c1',
        toolName: 'edit_file',
        output: 'Edited a.txt: 1 replacement.',
        truncated: false,
        diff,
      }),
    ]);
    expect(live.items[1]).toMatchObject({ diff });
  });
});

import { describe, expect, it } from 'vitest';
import { takeEvents } from '../testing/session-test-data.ts';
import { createSessionEvents, MAX_KEPT_EVENTS } from './session-events.ts';

/** The first `count` events of a stream, as id and event (tracked envelopes are tuples). */
describe('session events', () => {
  it('starts a subscriber that asks for the turn in progress with its turn.started, or with the next event between turns', async () => {
    const events = createSessionEvents();
    events.publish('s', { type: 'status', status: 'busy' });
    events.publish('s', { type: 'turn.started', turnId: 't1', messageId: 'm1', prompt: 'hi', model: 'f/m' });
    events.publish('s', { type: 'tool-call.started', turnId: 't1', toolCallId: 'c1', toolName: 'glob', args: {} });
    const controller = new AbortController();
    const during = await takeEvents(
      events.stream({ sessionId: 's', lastEventId: null, fromTurnStart: true, signal: controller.signal }),
      2,
    );
    expect(during.map((envelope) => envelope.data.type)).toEqual(['turn.started', 'tool-call.started']);

    events.publish('s', { type: 'turn.ended', turnId: 't1', reason: 'completed' });
    const between = takeEvents(
      events.stream({ sessionId: 's', lastEventId: null, fromTurnStart: true, signal: controller.signal }),
      1,
    );
    // The generator starts on its first read: the event comes once it waits.
    await new Promise((resolve) => setImmediate(resolve));
    events.publish('s', { type: 'status', status: 'idle' });
    expect((await between).map((envelope) => envelope.data.seq)).toEqual([5]);
    controller.abort();
    await events.close();
  });

  it('tells a subscriber asking for a turn whose start is no longer kept to resync, then goes on from the oldest kept event', async () => {
    const events = createSessionEvents();
    events.publish('s', { type: 'turn.started', turnId: 't1', messageId: 'm1', model: 'f/m' });
    for (let index = 0; index < MAX_KEPT_EVENTS + 10; index += 1)
      events.publish('s', { type: 'status', status: 'busy' });
    const controller = new AbortController();
    const [resync, first] = await takeEvents(
      events.stream({ sessionId: 's', lastEventId: null, fromTurnStart: true, signal: controller.signal }),
      2,
    );
    expect(resync?.data.type).toBe('session.resync');
    expect(first?.data.seq).toBe(12);
    controller.abort();
    await events.close();
  });

  it('resumes after the last id a subscriber saw, with no gap and no duplicate', async () => {
    const events = createSessionEvents();
    for (let index = 0; index < 5; index += 1) events.publish('s', { type: 'status', status: 'busy' });
    const controller = new AbortController();
    const first = await takeEvents(events.stream({ sessionId: 's', lastEventId: null, signal: controller.signal }), 3);
    const resumed = events.stream({ sessionId: 's', lastEventId: first[2]?.id, signal: controller.signal });
    events.publish('s', { type: 'status', status: 'idle' });
    const rest = await takeEvents(resumed, 3);
    expect([...first, ...rest].map((envelope) => envelope.data.seq)).toEqual([1, 2, 3, 4, 5, 6]);
    controller.abort();
    await events.close();
  });

  it('tells a subscriber that fell behind what is kept to resync, then goes on from the oldest kept event', async () => {
    const events = createSessionEvents();
    for (let index = 0; index < MAX_KEPT_EVENTS + 10; index += 1)
      events.publish('s', { type: 'status', status: 'busy' });
    const controller = new AbortController();
    const [id] = (
      await takeEvents(events.stream({ sessionId: 's', lastEventId: null, signal: controller.signal }), 1)
    ).map((envelope) => envelope.id);
    const epoch = id?.split(':')[0];
    const behind = await takeEvents(
      events.stream({ sessionId: 's', lastEventId: `${epoch}:3`, signal: controller.signal }),
      2,
    );
    expect(behind.map((envelope) => [envelope.data.type, envelope.data.seq])).toEqual([
      ['session.resync', 0],
      ['status', 11],
    ]);
    controller.abort();
    await events.close();
  });

  it('gives back the events of an idle session nobody follows, keeping its sequence numbers', async () => {
    const events = createSessionEvents({ idleLogMs: 20 });
    events.publish('s', { type: 'status', status: 'busy' });
    events.publish('s', { type: 'status', status: 'idle' });
    await new Promise((resolve) => setTimeout(resolve, 120));
    const next = events.publish('s', { type: 'status', status: 'busy' });
    expect(next?.seq).toBe(3);
    const controller = new AbortController();
    const replay = await takeEvents(
      events.stream({ sessionId: 's', lastEventId: 'old-epoch:1', signal: controller.signal }),
      2,
    );
    expect(replay.map((envelope) => [envelope.data.type, envelope.data.seq])).toEqual([
      ['session.resync', 0],
      ['status', 3],
    ]);
    controller.abort();
    await events.close();
  });
});

describe('session events: text deltas coalesced per tick', () => {
  const nextTick = () => new Promise((resolve) => setImmediate(resolve));

  it('merges the deltas of one turn published in one tick into one event, in order', async () => {
    const events = createSessionEvents();
    const controller = new AbortController();
    const stream = events.stream({ sessionId: 's', lastEventId: null, signal: controller.signal });
    events.publish('s', { type: 'turn.started', turnId: 't1', messageId: 'm', model: 'x' });
    for (const text of ['Hel', 'lo', ', ', 'world']) events.publish('s', { type: 'message.delta', turnId: 't1', text });
    await nextTick();
    events.publish('s', { type: 'message.delta', turnId: 't1', text: '.' });
    await nextTick();
    const taken = await takeEvents(stream, 3);
    expect(taken.map(({ data }) => [data.seq, data.type, data.type === 'message.delta' ? data.text : ''])).toEqual([
      [1, 'turn.started', ''],
      [2, 'message.delta', 'Hello, world'],
      [3, 'message.delta', '.'],
    ]);
    controller.abort();
    await events.close();
  });

  it('publishes waiting deltas before any other event, so order and sequence numbers stay exact', async () => {
    const events = createSessionEvents();
    const controller = new AbortController();
    const stream = events.stream({ sessionId: 's', lastEventId: null, signal: controller.signal });
    events.publish('s', { type: 'message.delta', turnId: 't1', text: 'a' });
    events.publish('s', { type: 'message.delta', turnId: 't1', text: 'b' });
    events.publish('s', { type: 'turn.ended', turnId: 't1', reason: 'completed' });
    events.publish('s', { type: 'message.delta', turnId: 't2', text: 'c' });
    const taken = await takeEvents(stream, 3);
    expect(taken.map(({ data }) => [data.seq, data.type])).toEqual([
      [1, 'message.delta'],
      [2, 'turn.ended'],
      [3, 'message.delta'],
    ]);
    expect(taken.map(({ data }) => (data.type === 'message.delta' ? data.text : ''))).toEqual(['ab', '', 'c']);
    controller.abort();
    await events.close();
  });

  it('never merges deltas of different turns or sessions', async () => {
    const events = createSessionEvents();
    const controller = new AbortController();
    const first = events.stream({ sessionId: 's1', lastEventId: null, signal: controller.signal });
    const second = events.stream({ sessionId: 's2', lastEventId: null, signal: controller.signal });
    events.publish('s1', { type: 'message.delta', turnId: 't1', text: 'a' });
    events.publish('s2', { type: 'message.delta', turnId: 't9', text: 'x' });
    events.publish('s1', { type: 'message.delta', turnId: 't2', text: 'b' });
    const fromFirst = await takeEvents(first, 2);
    const fromSecond = await takeEvents(second, 1);
    expect(fromFirst.map(({ data }) => (data.type === 'message.delta' ? `${data.turnId}:${data.text}` : ''))).toEqual([
      't1:a',
      't2:b',
    ]);
    expect(fromSecond.map(({ data }) => data.seq)).toEqual([1]);
    controller.abort();
    await events.close();
  });

  it('keeps only the newest events once more than are kept were published, in constant time each', async () => {
    const events = createSessionEvents();
    for (let index = 0; index < MAX_KEPT_EVENTS * 3; index += 1)
      events.publish('s', { type: 'status', status: 'busy' });
    const controller = new AbortController();
    const taken = await takeEvents(events.stream({ sessionId: 's', lastEventId: `x:1`, signal: controller.signal }), 2);
    expect(taken.map(({ data }) => data.seq)).toEqual([0, 2 * MAX_KEPT_EVENTS + 1]);
    controller.abort();
    await events.close();
  });
});

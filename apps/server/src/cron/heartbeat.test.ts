import { describe, expect, it } from 'vitest';
import { createSessionEvents } from '../sessions/index.ts';
import {
  HEARTBEAT_MARKER,
  HEARTBEAT_OK,
  heartbeatPrompt,
  isEmptyChecklist,
  watchHeartbeatAnswer,
} from './heartbeat.ts';

describe('the heartbeat checklist', () => {
  it('counts a file of only headings, comments and blank lines as nothing to check', () => {
    for (const text of ['', '  \n\n', '# Heartbeat\n\n## Checks\n', '<!-- add checks here -->\n# Title\n']) {
      expect(isEmptyChecklist(text), JSON.stringify(text)).toBe(true);
    }
    for (const text of ['- is the nightly build green?', '# Checks\n- disk space above 10 %']) {
      expect(isEmptyChecklist(text), JSON.stringify(text)).toBe(false);
    }
  });

  it('asks for the quiet answer when all is well and the marker when something needs attention', () => {
    const prompt = heartbeatPrompt('- is the nightly build green?\n');
    expect(prompt).toContain(`answer exactly ${HEARTBEAT_OK}`);
    expect(prompt).toContain(`begin your answer with ${HEARTBEAT_MARKER}`);
    expect(prompt).toContain('<checklist path="HEARTBEAT.md">\n- is the nightly build green?\n</checklist>');
  });
});

describe('watching a heartbeat’s answer', () => {
  it('reports each run’s own answer once, also when two runs wait in one session', async () => {
    const events = createSessionEvents();
    const reports: string[] = [];
    for (const messageId of ['m1', 'm2']) {
      watchHeartbeatAnswer(events, {
        sessionId: 's',
        messageId,
        report: (text) => reports.push(`${messageId}: ${text}`),
      });
    }
    const turn = (turnId: string, messageId: string, text: string) => {
      events.publish('s', { type: 'turn.started', turnId, messageId, model: 'f/m' });
      events.publish('s', {
        type: 'message.completed',
        turnId,
        message: {
          id: `a-${turnId}`,
          at: '2026-11-24T10:00:00.000Z',
          role: 'assistant',
          text,
          model: 'f/m',
          toolCalls: [],
        },
      });
      events.publish('s', { type: 'turn.ended', turnId, reason: 'completed' });
    };
    turn('t1', 'm1', `${HEARTBEAT_MARKER} the build is red.`);
    turn('t2', 'm2', `${HEARTBEAT_MARKER} the disk is full.`);
    turn('t3', 'm3', `${HEARTBEAT_MARKER} not watched.`);
    expect(reports).toEqual(['m1: the build is red.', 'm2: the disk is full.']);
    await events.close();
  });

  it('stays silent when all is well', async () => {
    const events = createSessionEvents();
    const reports: string[] = [];
    watchHeartbeatAnswer(events, { sessionId: 's', messageId: 'm1', report: (text) => reports.push(text) });
    events.publish('s', { type: 'turn.started', turnId: 't1', messageId: 'm1', model: 'f/m' });
    events.publish('s', {
      type: 'message.completed',
      turnId: 't1',
      message: {
        id: 'a1',
        at: '2026-11-24T10:00:00.000Z',
        role: 'assistant',
        text: HEARTBEAT_OK,
        model: 'f/m',
        toolCalls: [],
      },
    });
    events.publish('s', { type: 'turn.ended', turnId: 't1', reason: 'completed' });
    expect(reports).toEqual([]);
    await events.close();
  });
});

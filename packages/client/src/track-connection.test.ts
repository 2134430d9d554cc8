import { describe, expect, it } from 'vitest';
import { type ConnectionChange, type ConnectionEvent, trackConnection } from './track-connection.ts';

const open: ConnectionEvent = { type: 'open' };
const closed: ConnectionEvent = { type: 'closed' };
const accepted: ConnectionEvent = { type: 'accepted' };
const refused: ConnectionEvent = { type: 'rejected', code: 'unauthorized', message: 'invalid token' };

/** The changes reported for a sequence of raw events, in order. */
function changes(events: ConnectionEvent[]): ConnectionChange[] {
  const track = trackConnection();
  return events.flatMap((event) => track(event) ?? []);
}

/** One failed attempt: the socket never opens. */
const unreachableAttempt = [closed];
/** One refused attempt: the socket opens, the server refuses the token and closes. */
const refusedAttempt = [open, refused, closed];

describe('trackConnection', () => {
  it('reports an absent server once however many attempts fail', () => {
    expect(changes([...unreachableAttempt, ...unreachableAttempt, ...unreachableAttempt])).toEqual([
      { type: 'unreachable' },
    ]);
  });

  it('reports a refusal once however many attempts are refused', () => {
    expect(changes([...refusedAttempt, ...refusedAttempt, ...refusedAttempt])).toEqual([
      { type: 'refused', code: 'unauthorized', message: 'invalid token' },
    ]);
  });

  it('reports each change: connected, lost, unreachable, refused, connected again', () => {
    expect(
      changes([
        open,
        accepted,
        closed,
        ...unreachableAttempt,
        ...unreachableAttempt,
        ...refusedAttempt,
        ...refusedAttempt,
        ...unreachableAttempt,
        ...unreachableAttempt,
        open,
        accepted,
      ]),
    ).toEqual([
      { type: 'connected', again: false },
      { type: 'lost' },
      { type: 'refused', code: 'unauthorized', message: 'invalid token' },
      { type: 'unreachable' },
      { type: 'connected', again: true },
    ]);
  });

  it('reports a refusal with another code as a change', () => {
    const forbidden: ConnectionEvent = { type: 'rejected', code: 'forbidden', message: 'origin not allowed' };
    expect(changes([...refusedAttempt, open, forbidden, closed]).map((change) => change.type)).toEqual([
      'refused',
      'refused',
    ]);
  });

  it('says nothing for a socket that opens until the server accepts the credential', () => {
    expect(changes([open])).toEqual([]);
    expect(changes([open, accepted, open, accepted])).toEqual([{ type: 'connected', again: false }]);
  });

  it('reports a server refused in the TLS handshake once per reason, the attempt not also as unreachable', () => {
    const mismatch: ConnectionEvent = { type: 'untrusted', message: 'not the pinned one' };
    const expired: ConnectionEvent = { type: 'untrusted', message: 'certificate has expired' };
    expect(
      changes([
        open,
        accepted,
        closed,
        mismatch,
        closed,
        mismatch,
        closed,
        expired,
        closed,
        ...unreachableAttempt,
        open,
        accepted,
      ]),
    ).toEqual([
      { type: 'connected', again: false },
      { type: 'lost' },
      { type: 'untrusted', message: 'not the pinned one' },
      { type: 'untrusted', message: 'certificate has expired' },
      { type: 'unreachable' },
      { type: 'connected', again: true },
    ]);
    expect(changes([mismatch, closed, open, accepted])).toEqual([
      { type: 'untrusted', message: 'not the pinned one' },
      { type: 'connected', again: true },
    ]);
  });
});

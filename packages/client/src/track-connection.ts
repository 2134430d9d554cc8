import type { ErrorCode } from '@molf/protocol';

/** What a connection's raw events mean for the people reading its log: one change per state. */
export type ConnectionChange =
  /** The server accepted the credential; `again` after a loss, a refusal or an unreachable spell. */
  | { type: 'connected'; again: boolean }
  /** An accepted connection dropped; the client reconnects. */
  | { type: 'lost' }
  /** No connection could be made (nothing listens, or the network is down); the client retries. */
  | { type: 'unreachable' }
  /** The server answered and refused the credential. */
  | { type: 'refused'; code: ErrorCode; message: string }
  /**
   * This client refused the server in the TLS handshake (a certificate it does not trust, for
   * this host name, expired…): nothing was sent. The client retries; `message` says why and what to do.
   */
  | { type: 'untrusted'; message: string };

/** One raw event of the link: the socket opened or closed, the server refused or accepted the credential. */
export type ConnectionEvent =
  | { type: 'open' }
  | { type: 'closed' }
  | { type: 'rejected'; code: ErrorCode; message: string }
  | { type: 'untrusted'; message: string }
  | { type: 'accepted' };

type State = 'starting' | ConnectionChange['type'];

/**
 * Turns the link's raw events into state changes. A client retrying every 250 ms sees an open and
 * a close (or a refusal) per attempt; a log line per attempt buries everything else, so a change
 * is reported only when the state is not the one last reported.
 */
export function trackConnection(): (event: ConnectionEvent) => ConnectionChange | undefined {
  let state: State = 'starting';
  let refusalCode: ErrorCode | undefined;
  /** Why the server was last refused in the TLS handshake, while that is the state. */
  let untrustedMessage: string | undefined;
  let everConnected = false;
  /** The current attempt was refused (by either side): its close is part of the refusal, not a loss. */
  let attemptRefused = false;

  return (event) => {
    switch (event.type) {
      case 'open':
        attemptRefused = false;
        return undefined;
      case 'accepted': {
        if (state === 'connected') return undefined;
        const again = everConnected || refusalCode !== undefined || state === 'untrusted';
        state = 'connected';
        everConnected = true;
        refusalCode = undefined;
        untrustedMessage = undefined;
        return { type: 'connected', again };
      }
      case 'rejected':
        attemptRefused = true;
        if (state === 'refused' && refusalCode === event.code) return undefined;
        state = 'refused';
        refusalCode = event.code;
        untrustedMessage = undefined;
        return { type: 'refused', code: event.code, message: event.message };
      case 'untrusted':
        attemptRefused = true;
        if (state === 'untrusted' && untrustedMessage === event.message) return undefined;
        state = 'untrusted';
        untrustedMessage = event.message;
        refusalCode = undefined;
        return { type: 'untrusted', message: event.message };
      case 'closed':
        if (attemptRefused) {
          attemptRefused = false;
          return undefined;
        }
        if (state === 'connected') {
          state = 'lost';
          return { type: 'lost' };
        }
        if (state === 'lost' || state === 'unreachable') return undefined;
        state = 'unreachable';
        refusalCode = undefined;
        untrustedMessage = undefined;
        return { type: 'unreachable' };
      default:
        event satisfies never;
        return undefined;
    }
  };
}
